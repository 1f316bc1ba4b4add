// throwaway GPU driver (threads = ranks, one .so copy per rank), deleted after use.
#include <kf/kf.cuh>
#include <nccl.h>
#include <cuda_bf16.h>
#include <dlfcn.h>
#include <unistd.h>
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include <atomic>
#define CK(x) do{cudaError_t e=(x);if(e!=cudaSuccess){fprintf(stderr,"%s:%d %s\n",__FILE__,__LINE__,cudaGetErrorString(e));exit(9);}}while(0)
static float bf2f(uint16_t b){uint32_t u=uint32_t(b)<<16;float f;memcpy(&f,&u,4);return f;}
static uint16_t f2bf(float f){uint32_t u;memcpy(&u,&f,4);u+=0x7fff+((u>>16)&1);return u>>16;}
static double gen(int call,int rank,int64_t i,bool bf){uint64_t h=(uint64_t(call)*1000003+rank)*0x9E3779B97F4A7C15ull+uint64_t(i)*0xBF58476D1CE4E5B9ull;h^=h>>31;h*=0x94D049BB133111EBull;h^=h>>29;double v=double(h>>11)/double(1ull<<53)*2-1;float f=float(v);if(bf)f=bf2f(f2bf(f));return f;}
struct Ctx{char*base;size_t heap;size_t used;};
static void*alloc_fn(void*c,size_t b){Ctx*x=(Ctx*)c;size_t o=(x->used+255)&~size_t(255);if(o+b>x->heap)return nullptr;x->used=o+b;cudaMemset(x->base+o,0,b);cudaDeviceSynchronize();return x->base+o;}
static void missing(const char*n){fprintf(stderr,"missing %s\n",n);abort();}
static std::barrier<>* g_bar;
int main(int argc,char**argv){
  if(argc<8){fprintf(stderr,"usage: lib problem world n dtype calls root ngpus\n");return 2;}
  std::string lib=argv[1],prob=argv[2];int W=atoi(argv[3]);int64_t n=atoll(argv[4]);bool bf=std::string(argv[5])=="bf16";int calls=atoi(argv[6]);int root=atoi(argv[7]);int G=atoi(argv[8]);
  int64_t xn=n,yn=n;
  if(prob=="all_gather")yn=W*n;
  if(prob=="reduce_scatter")xn=W*n;
  if(prob=="all_to_all"){xn=W*n;yn=W*n;}
  size_t es=bf?2:4; size_t heap=(1<<20)+(xn+yn)*es+4096;
  std::vector<char*> bases(W);
  for(int r=0;r<W;r++){CK(cudaSetDevice(r%G));CK(cudaMalloc(&bases[r],heap));}
  for(int a=0;a<G;a++)for(int b=0;b<G;b++)if(a!=b){cudaSetDevice(a);cudaDeviceEnablePeerAccess(b,0);cudaGetLastError();}
  std::vector<ncclComm_t> nc(W,nullptr);
  bool use_nccl=getenv("NCCL_BASE")!=nullptr;
  if(use_nccl){std::vector<int> devs(W);for(int r=0;r<W;r++)devs[r]=r;if(ncclCommInitAll(nc.data(),W,devs.data())!=ncclSuccess){fprintf(stderr,"nccl init failed\n");return 7;}}
  std::barrier bar(W);g_bar=&bar;std::atomic<int> fails{0};
  std::vector<std::thread> th;
  for(int r=0;r<W;r++)th.emplace_back([&,r]{
    CK(cudaSetDevice(r%G));
    std::string copy="/tmp/gpudrv_"+std::to_string(getpid())+"_"+std::to_string(r)+".so";
    std::string cmd="cp "+lib+" "+copy; if(system(cmd.c_str())!=0){fails++;return;}
    void*h=dlopen(copy.c_str(),RTLD_NOW|RTLD_LOCAL);if(!h){fprintf(stderr,"dlopen %s\n",dlerror());fails++;return;}
    auto run=(int(*)(kf::Comm&,kf::Tensors&))dlsym(h,"kf_run");auto setup=(int(*)(kf::Comm&,kf::Tensors&))dlsym(h,"kf_setup");
    cudaStream_t s;CK(cudaStreamCreateWithFlags(&s,cudaStreamNonBlocking));
    Ctx ctx{bases[r],heap,0};
    kf::Comm c{};c.rank=r;c.world=W;c.local_rank=r;c.device=r%G;c.emulated=W>G;c.stream_=s;for(int i=0;i<W;i++)c.bases[i]=bases[i];c.heap_bytes=heap;
    c.ops.ctx=&ctx;c.ops.alloc=alloc_fn;c.ops.barrier=[](void*){g_bar->arrive_and_wait();};c.nccl_=nc[r];
    kf::Tensor T[2]{};T[0].name="x";T[0].dtype=bf?kf::DType::bf16:kf::DType::f32;T[0].ndim=1;T[0].shape[0]=xn;T[0].numel=xn;T[0].data=alloc_fn(&ctx,xn*es);
    T[1].name="y";T[1].dtype=T[0].dtype;T[1].ndim=1;T[1].shape[0]=yn;T[1].numel=yn;T[1].data=alloc_fn(&ctx,yn*es);T[1].is_output=1;
    kf::Param P[2]={{"n",double(n)},{"root",double(root)}};
    kf::Tensors ts{2,T,2,P,missing};
    if(setup){int rc=setup(c,ts);if(rc){fprintf(stderr,"rank %d setup rc %d\n",r,rc);fails++;}}
    bar.arrive_and_wait();
    std::vector<char> hx(xn*es),hy(yn*es);
    for(int call=0;call<calls;call++){
      for(int64_t i=0;i<xn;i++){double v=gen(call,r,i,bf);if(bf)((uint16_t*)hx.data())[i]=f2bf(v);else ((float*)hx.data())[i]=v;}
      CK(cudaMemcpy(T[0].data,hx.data(),xn*es,cudaMemcpyHostToDevice));CK(cudaMemset(T[1].data,0xff,yn*es));CK(cudaDeviceSynchronize());
      bar.arrive_and_wait();
      if(call%2==1)usleep(r*20000);
      int rc=run(c,ts);if(rc){fprintf(stderr,"rank %d call %d rc %d\n",r,call,rc);fails++;}
      CK(cudaStreamSynchronize(s));
      CK(cudaMemcpy(hy.data(),T[1].data,yn*es,cudaMemcpyDeviceToHost));
      int nb=0;
      for(int64_t i=0;i<yn;i++){double want=0;
        if(prob=="all_reduce"){for(int q=0;q<W;q++)want+=gen(call,q,i,bf);}
        else if(prob=="reduce_scatter"){for(int q=0;q<W;q++)want+=gen(call,q,r*n+i,bf);}
        else if(prob=="all_gather"){want=gen(call,i/n,i%n,bf);}
        else if(prob=="all_to_all"){want=gen(call,i/n,r*n+i%n,bf);}
        else if(prob=="broadcast"){want=gen(call,root,i,bf);}
        double got=bf?double(bf2f(((uint16_t*)hy.data())[i])):double(((float*)hy.data())[i]);
        double tol=bf?0.08+0.02*fabs(want):((prob=="all_reduce"||prob=="reduce_scatter")?1e-5+1e-5*fabs(want):0);
        if(!(fabs(got-want)<=tol)){if(nb<2)fprintf(stderr,"rank %d call %d y[%ld] got %g want %g\n",r,call,(long)i,got,want);nb++;}}
      std::vector<char> hx2(xn*es);CK(cudaMemcpy(hx2.data(),T[0].data,xn*es,cudaMemcpyDeviceToHost));
      if(memcmp(hx.data(),hx2.data(),xn*es)){fprintf(stderr,"rank %d input modified\n",r);nb++;}
      if(nb)fails++;
      bar.arrive_and_wait();
      if(getenv("TRACE"))fprintf(stderr,"r%d done call %d\n",r,call);
    }
    unlink(copy.c_str());
  });
  for(auto&t:th)t.join();
  printf("%s %s W=%d G=%d n=%ld %s root=%d: %s\n",lib.c_str(),prob.c_str(),W,G,(long)n,bf?"bf16":"fp32",root,fails?"FAIL":"ok");fflush(stdout);fflush(stderr);_exit(fails?1:0);
}
