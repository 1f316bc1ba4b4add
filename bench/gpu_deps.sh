#!/usr/bin/env bash
# bench/gpu_deps.sh DIR: gives the lent GPU machine what kforge builds and runs with.
#
# That machine reaches no package archive, and its image has nvcc, CMake and ninja but
# not OpenMPI or the headers kforge uses. So the .deb files are fetched here, on a
# machine that reaches Debian's archive (`bench/gpu_deps.sh --fetch DIR`), carried with
# the call in DIR (ignored by git), and unpacked there (`bench/gpu_deps.sh DIR`).
# Unpacking never replaces a file the machine already has: its own libraries win, and
# only what is missing is added. Nothing here runs on a developer's or CI's machine,
# where scripts/setup.sh installs packages the ordinary way.
set -euo pipefail

packages=(
  # OpenMPI (mpirun, libmpi, the compiler wrappers CMake's FindMPI asks) and what it loads
  openmpi-bin openmpi-common libopenmpi3 libopenmpi-dev libhwloc15 libhwloc-plugins
  libevent-core-2.1-7 libevent-pthreads-2.1-7 libevent-2.1-7 libevent-extra-2.1-7
  libevent-openssl-2.1-7 libpmix2 libfabric1 libucx0 libibverbs1 ibverbs-providers
  librdmacm1 libpsm2-2 libpsm-infinipath1 libnuma1 libmunge2 libnl-3-200 libnl-route-3-200
  libpciaccess0 libltdl7 ocl-icd-libopencl1 libxml2 libicu72
  # bubblewrap: the sandbox every candidate, compile and agent command runs in
  bubblewrap libcap2 libselinux1 libpcre2-8-0
  # libseccomp: the system-call filter of every rank
  libseccomp-dev libseccomp2
  # headers kforge compiles against
  nlohmann-json3-dev libfmt-dev libfmt9 doctest-dev libcli11-dev
  # libcurl (the LLM providers) and what it loads, for a machine without it
  libcurl4 libcurl4-openssl-dev libldap-2.5-0 libsasl2-2 libsasl2-modules-db libssh2-1
  librtmp1 libnghttp2-14 libpsl5 libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0
  libkeyutils1 libcom-err2 libbrotli1 libidn2-0 libunistring2 libgnutls30 libnettle8
  libhogweed6 libp11-kit0 libtasn1-6 libgmp10 libssl3 libdb5.3
  # OpenSSL's libcrypto headers: SHA-256 (sandbox/sha256.cpp)
  libssl-dev
  # solve's live view: libunistring (display widths), GNU Source-highlight (the kernel in
  # colour; its headers include Boost's), and pkg-config, which CMake finds it with
  libunistring-dev libsource-highlight-dev libsource-highlight4v5 libsource-highlight-common
  libboost-regex1.74.0 libboost-regex1.74-dev libboost1.74-dev pkgconf pkgconf-bin libpkgconf3
)

if [ "${1:-}" = "--fetch" ]; then
  dir="${2:?usage: bench/gpu_deps.sh --fetch DIR}"
  mkdir -p "$dir"
  (cd "$dir" && apt-get download "${packages[@]}")
  du -sh "$dir"
  exit 0
fi

dir="${1:?usage: bench/gpu_deps.sh DIR (a folder of .deb files; see --fetch)}"
if command -v mpirun >/dev/null 2>&1 && [ -e /usr/include/nlohmann/json.hpp ] &&
   [ -e /usr/include/fmt/core.h ] && [ -e /usr/include/CLI/CLI.hpp ] && command -v bwrap >/dev/null 2>&1 &&
   [ -e /usr/include/seccomp.h ] && [ -e /usr/include/uniwidth.h ] &&
   [ -e /usr/include/srchilite/sourcehighlight.h ] && command -v pkg-config >/dev/null 2>&1; then
  echo "gpu_deps: this machine has what kforge needs; nothing unpacked"
  exit 0
fi
ls "$dir"/*.deb >/dev/null 2>&1 || { echo "gpu_deps: no .deb files in $dir (run --fetch where the archive is reachable)"; exit 1; }

stage=$(mktemp -d /tmp/kf-debs.XXXXXX)
for deb in "$dir"/*.deb; do
  if command -v dpkg-deb >/dev/null 2>&1; then
    dpkg-deb -x "$deb" "$stage"
  else
    # No dpkg: a .deb is an ar archive whose data.tar.* holds the files.
    python3 - "$deb" "$stage" <<'PY'
import io, sys, tarfile
deb, dest = sys.argv[1:]
data = open(deb, "rb").read()
assert data[:8] == b"!<arch>\n", deb + ": not a .deb"
pos = 8
while pos < len(data):
    name = data[pos:pos + 16].decode().strip().rstrip("/")
    size = int(data[pos + 48:pos + 58].decode().strip())
    body = data[pos + 60:pos + 60 + size]
    pos += 60 + size + (size & 1)
    if name.startswith("data.tar"):
        tarfile.open(fileobj=io.BytesIO(body)).extractall(dest)
PY
  fi
done
# Into /, keeping every file and directory link already there (/lib -> usr/lib).
tar -C "$stage" -cf - . | tar -C / --skip-old-files --keep-directory-symlink -xf -
rm -rf "$stage"

# What dpkg's alternatives would have made: the plain names of OpenMPI's programs.
for pair in mpirun:orterun mpiexec:orterun mpicc:mpicc.openmpi mpicxx:mpicxx.openmpi mpic++:mpic++.openmpi; do
  name=${pair%%:*} target=/usr/bin/${pair#*:}
  command -v "$name" >/dev/null 2>&1 || { [ -e "$target" ] && ln -s "$target" "/usr/local/bin/$name"; }
done
# Debian keeps its libraries in the multiarch folders; make sure the loader looks there.
printf '/usr/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n' >/etc/ld.so.conf.d/zz-kforge-debs.conf
ldconfig
echo "gpu_deps: unpacked $(ls "$dir"/*.deb | wc -l) packages; $(mpirun --version 2>&1 | head -1)"
