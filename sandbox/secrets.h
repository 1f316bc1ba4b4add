// sandbox/secrets.h: credentials never sit where a child could read them. kforge's own
// /proc/<pid>/environ is readable by any process of the same user that can see it; the
// sandbox (confine.h) hides kforge's processes from candidates, and this takes the keys
// out of that file as well, so that a process which does see kforge (a debugger, a
// misconfigured machine, KFORGE_ISOLATION=none) still reads no key there.
#pragma once

#include <string>
#include <vector>

namespace sandbox {

// True for a variable name that looks like a credential: it contains KEY, TOKEN, SECRET,
// PASSWORD, PASSWD, CREDENTIAL or AUTH (any case).
bool looks_secret(const std::string& name);

// Takes every credential-like variable out of this process's environment: the value is
// kept in memory for secret_env(), the variable is unset, and the bytes of the original
// "NAME=value" string (what /proc/<pid>/environ shows) are overwritten with zeros. Call
// it first thing in main, before any thread or child starts. Returns how many it took.
int take_secrets_from_environment();

// A variable taken by take_secrets_from_environment(), else the environment's; "" when
// unset.
std::string secret_env(const std::string& name);
// "NAME=value" for every variable taken: for a child that is kforge itself (a sweep's
// `kforge solve`), which takes them out of its own environment again first thing.
std::vector<std::string> taken_secret_entries();

}  // namespace sandbox
