#!/usr/bin/env python3
"""foliomap.py measures how much of a file one read of a shared mapping maps.

The pager (internal/graph/pager.go) bounds the pages of the database file
that bbolt's mapping holds, and how often it must look depends on how much a
single read maps: the page, its fault-around neighbours (64 KiB), or, where
the page cache holds the file in large folios, the whole folio (up to 2 MiB
on ext4 under Linux 6.18). This reads FILE's first SIZE MiB into the page
cache, maps it, touches one byte every STRIDE KiB under each madvise, and
prints the growth of RssFile per touch.

Usage: bench/foliomap.py FILE [SIZE_MIB [STRIDE_KIB]]

    python3 bench/foliomap.py /work/big/p1m.db 800 2048
"""
import mmap
import sys


def rss_file_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssFile"):
                return int(line.split()[1])
    raise SystemExit("no RssFile in /proc/self/status (Linux only)")


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    path = sys.argv[1]
    size = int(sys.argv[2] if len(sys.argv) > 2 else 400) << 20
    stride = int(sys.argv[3] if len(sys.argv) > 3 else 2048) << 10
    with open(path, "rb") as f:
        got = len(f.read(size))  # into the page cache
        if got < size:
            raise SystemExit(f"{path}: {got} bytes, want at least {size}")
        for name in ["MADV_NORMAL", "MADV_RANDOM", "MADV_NOHUGEPAGE"]:
            m = mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ)
            m.madvise(getattr(mmap, name))
            before, n = rss_file_kb(), 0
            for off in range(3 * 4096, size, stride):
                _ = m[off]
                n += 1
            print(f"{name:16} {n} touches, {(rss_file_kb() - before) / n:.0f} kB mapped a touch")
            m.close()


if __name__ == "__main__":
    main()
