#!/usr/bin/env python3
"""bench/fatbin_text.py LIB.so: the device code a CUDA library embeds, one line per piece,
for comparing two builds where cuobjdump is missing (a toolkit without it).

Reads the library's .nv_fatbin section (the fatbins nvcc embeds, one after another), and
for each ELF image (a cubin) prints its SM, a SHA-256 of each kernel's machine code (the
`.text.<kernel>` sections: the SASS, byte for byte) and one of the whole image; for each
PTX image, a SHA-256 of its (possibly compressed) bytes. Lines:
  text sm_90 .text._Z10sum_kernel... <sha> <bytes>
  elf  sm_90 <sha> <bytes>       (elf-nokernel: an image without kernels, a device link's)
  ptx  sm_90 <sha> <bytes>
"""
import hashlib
import struct
import sys


def sections(data):
    """(name, bytes) of each section of an ELF64 little-endian image."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = heads[shstrndx]
    names = data[strtab[4]:strtab[4] + strtab[5]]
    for h in heads:
        name = names[h[0]:names.index(b"\0", h[0])].decode()
        body = b"" if h[1] == 8 else data[h[4]:h[4] + h[5]]  # SHT_NOBITS holds no bytes
        yield name, body


def fatbin_section(path):
    for name, body in sections(open(path, "rb").read()):
        if name == ".nv_fatbin":
            return body
    return b""


def images(fb):
    """(kind, sm, payload) of each image of each fatbin in the section."""
    pos = 0
    while pos + 16 <= len(fb):
        magic, _, hsize, size = struct.unpack_from("<IHHQ", fb, pos)
        if magic != 0xBA55ED50:
            pos += 8  # fatbins are 8-byte aligned; skip padding
            continue
        entry, end = pos + hsize, pos + hsize + size
        while entry < end:
            kind, _, ehsize, esize = struct.unpack_from("<HHIQ", fb, entry)
            arch, = struct.unpack_from("<I", fb, entry + 28)
            yield kind, arch, fb[entry + ehsize:entry + ehsize + esize]
            entry += ehsize + esize
        pos = end


def main():
    sha = lambda b: hashlib.sha256(b).hexdigest()[:16]
    for kind, arch, body in images(fatbin_section(sys.argv[1])):
        sm = "sm_%d" % arch
        if kind == 2 and body[:4] == b"\x7fELF":
            texts = [(n, t) for n, t in sections(body) if n.startswith(".text.")]
            for name, text in texts:
                print("text", sm, name, sha(text), len(text))
            # A device link's image of a whole-program build holds no kernel.
            print("elf " if texts else "elf-nokernel", sm, sha(body), len(body))
        else:
            print("ptx " if kind == 1 else "kind%d" % kind, sm, sha(body), len(body))


if __name__ == "__main__":
    main()
