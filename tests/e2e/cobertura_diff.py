#!/usr/bin/env python3
"""Compares two Cobertura reports line by line: which lines are covered,
which are not, how many hits each has, and each line's branches
(covered/total).

    cobertura_diff.py OURS.xml THEIRS.xml [--expect FILE]

Lines are keyed by the source file's name and the line number (the two
tools may root paths differently).  Prints every difference; with
--expect, the differences listed in FILE (lines of "file:line kind",
kind one of: ours-only, theirs-only, covered, hits, branches) are allowed and
each must still occur (a documented difference that went away is news
too).  Exit status 0 when the reports agree but for those."""
import os
import sys
import xml.etree.ElementTree as ET


def read(path):
    root = ET.parse(path).getroot()
    lines = {}
    for cls in root.iter('class'):
        name = os.path.basename(cls.get('filename'))
        for ln in cls.find('lines').iter('line'):
            key = '%s:%s' % (name, ln.get('number'))
            hits = int(ln.get('hits'))
            cond = ln.get('condition-coverage')
            covered, total = 0, 0
            if cond:
                frac = cond[cond.index('(') + 1:cond.index(')')]
                covered, total = (int(x) for x in frac.split('/'))
            old = lines.get(key)
            if old:  # a line in two classes (or twice): sum hits, max branches
                hits += old[0]
                covered, total = max(covered, old[1]), max(total, old[2])
            lines[key] = (hits, covered, total)
    return lines


def main():
    args = sys.argv[1:]
    expect = set()
    if '--expect' in args:
        i = args.index('--expect')
        with open(args[i + 1]) as f:
            for line in f:
                line = line.split('#')[0].strip()
                if line:
                    expect.add(line)
        del args[i:i + 2]
    ours, theirs = read(args[0]), read(args[1])
    found = set()
    for key in sorted(set(ours) | set(theirs), key=lambda k: (k.split(':')[0], int(k.split(':')[1]))):
        o, t = ours.get(key), theirs.get(key)
        if o and not t:
            found.add('%s ours-only' % key)
        elif t and not o:
            found.add('%s theirs-only' % key)
        else:
            if (o[0] > 0) != (t[0] > 0):
                found.add('%s covered' % key)
            elif o[0] != t[0]:
                found.add('%s hits' % key)
            if (o[1], o[2]) != (t[1], t[2]):
                found.add('%s branches' % key)
    bad = 0
    for d in sorted(found - expect):
        key = d.split(' ')[0]
        print('differs: %s (ours %s, coverlet %s)' % (d, ours.get(key), theirs.get(key)))
        bad += 1
    for d in sorted(expect - found):
        print('expected difference gone: %s' % d)
        bad += 1
    covered = sum(1 for v in ours.values() if v[0] > 0)
    print('%d lines compared (%d covered by us, %d by coverlet), %d documented differences, '
          '%d unexplained' % (len(set(ours) | set(theirs)), covered,
                              sum(1 for v in theirs.values() if v[0] > 0), len(expect & found), bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
