#include <cstdio>
int main() { std::puts("kforge: under construction"); return 0; }
