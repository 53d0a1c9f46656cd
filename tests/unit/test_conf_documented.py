#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""
The documented examples in conf/ cover every config key swordd knows.

`swordd --config-keys` lists the key table (lib/sword/sword_config.h); every
row must appear as "key = value" in a section of its kind ([atomic], or
[lock.NAME] for a lock.NAME row) of conf/swordd.conf or conf/clover.conf,
in a section that carries ';' comments, and both files must pass
--check-config.  A key added to the table without an example fails here.

    test_conf_documented.py SWORDD CONF_DIR
"""
import re
import subprocess
import sys

EXAMPLES = ["swordd.conf", "clover.conf"]


def table(swordd):
    out = subprocess.run([swordd, "--config-keys"], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    rows = []
    for line in out.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        section, key = line.split("\t")[:2]
        rows.append((section, key))
    return rows


def documented(path):
    """{(section kind, key)} of keys given in a commented section."""
    found = set()
    section, commented, keys = None, False, []

    def close():
        if section is not None and commented:
            for k in keys:
                found.add((section, k))

    for line in open(path):
        s = line.strip()
        if s.startswith("["):
            close()
            name = s.strip("[]")
            # [server.mem0] -> server.NAME; [clover] stays clover
            section = name.split(".")[0] + ".NAME" if "." in name else name
            commented, keys = False, []
        elif s.startswith(";"):
            commented = True
        elif "=" in s and section is not None:
            keys.append(s.split("=")[0].strip())
    close()
    return found


def main():
    swordd, conf_dir = sys.argv[1], sys.argv[2]
    rows = table(swordd)
    have = set()
    for name in EXAMPLES:
        path = conf_dir + "/" + name
        have |= documented(path)
        r = subprocess.run([swordd, "-c", path, "--check-config"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            print("FAIL: %s does not pass --check-config:\n%s" % (path, r.stdout))
            return 1
    missing = [s + " " + k for s, k in rows if (s, k) not in have]
    print("%d keys in the table, %d documented in %s" % (len(rows), len(rows) - len(missing),
                                                         " + ".join(EXAMPLES)))
    if missing:
        print("FAIL: not documented in conf/: " + ", ".join(missing))
        return 1
    if not re.search(r"^pmtu = 4096", open(conf_dir + "/swordd.conf").read(), re.M):
        print("FAIL: conf/swordd.conf [atomic] pmtu is not the default 4096")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
