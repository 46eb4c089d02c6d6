#!/usr/bin/env python3
"""tests/lint/doc_links.py - the cross-references of README.md and docs/
(notes included) resolve.  A markdown link to a local file: the file
exists, and its anchor is one that GitHub makes from a heading of that
file (or an explicit <a id=...>).  A reference in prose, `FILE.md,
"Title"` or `"Title" above` / `below, "Title"`: the file exists and has
a heading, or a paragraph's bold or italic title, that starts with
Title.  Web links are not followed.

usage: doc_links.py SOURCE_ROOT
Fails (exit 1) with one line per broken reference: file:line, the
reference, why."""
import bisect
import os
import re
import sys

# [text](target) and [text]: target; an image's ![alt](target) too.
INLINE = re.compile(r'\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
REFDEF = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$')
HEADING = re.compile(r'^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
EXPLICIT = re.compile(r'<a\s+(?:id|name)\s*=\s*"([^"]+)"')
FENCE = re.compile(r'^\s{0,3}(```|~~~)')
# docs/design.md, "Title" (also without the comma, or in parentheses);
# "Title" above; below, "Title".
PROSE_REF = re.compile(r'([\w./-]+\.md),?\s+\(?"([^"]+)"'
                       r'|"([^"]+)"\s+(?:above|below)\b'
                       r'|\b(?:above|below),\s+"([^"]+)"')
# A paragraph's title: **Title** or *Title.*
EMPH = re.compile(r'\*\*([^*]+)\*\*|(?<![*\w])\*([^*\s][^*]*)\*(?!\*)')


def prose_lines(path, blank_code=True):
    """(line number, text) of the lines outside fenced code blocks; with
    blank_code, inline code spans blanked (a link in code is an example)."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if m:
                if fence is None:
                    fence = m.group(1)
                elif m.group(1) == fence:
                    fence = None
                continue
            if fence is None and not blank_code:
                yield n, line
            elif fence is None:
                yield n, re.sub(r'(`+)(?:(?!\1).)+\1',
                                lambda c: " " * len(c.group(0)), line)


def slug(title):
    """GitHub's anchor for a heading: its rendered text, lower case,
    punctuation dropped (hyphens and underscores kept), spaces as hyphens."""
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', title)
    text = text.replace("`", "").replace("*", "")
    text = re.sub(r'<[^>]+>', '', text)
    return "".join(c for c in text.lower()
                   if c.isalnum() or c in "-_ ").replace(" ", "-")


def anchors(path, cache={}):
    """The anchors a markdown file offers (a repeated heading gets -1, -2)."""
    if path not in cache:
        seen = {}
        found = set()
        for _, line in prose_lines(path, blank_code=False):
            found.update(EXPLICIT.findall(line))
            h = HEADING.match(line)
            if h:
                s = slug(h.group(2))
                k = seen.get(s, 0)
                seen[s] = k + 1
                found.add(s if k == 0 else "%s-%d" % (s, k))
        cache[path] = found
    return cache[path]


def norm(title):
    """A title for comparison: lower case words, no markup or punctuation."""
    return " ".join(re.findall(r"[a-z0-9]+", title.lower()))


def titles(path, cache={}):
    """The normalised headings and bold or italic titles of a file."""
    if path not in cache:
        found = []
        for _, line in prose_lines(path, blank_code=False):
            h = HEADING.match(line)
            if h:
                found.append(norm(h.group(2)))
            found += [norm(a or b) for a, b in EMPH.findall(line)]
        cache[path] = found
    return cache[path]


def find_md(root, path, name):
    """FILE.md as prose names it: beside the naming file, from the source
    root, or in docs/."""
    for base in (os.path.dirname(path), root, os.path.join(root, "docs")):
        target = os.path.normpath(os.path.join(base, name))
        if os.path.exists(target):
            return target
    return None


def check_prose(root, path):
    """(references, errors) of a file's prose references, which may span
    line ends (those in code are examples)."""
    errors = []
    rel = os.path.relpath(path, root)
    text, offsets, numbers = "", [], []
    for n, line in prose_lines(path):
        offsets.append(len(text))
        numbers.append(n)
        text += line.rstrip("\n") + " "
    refs = list(PROSE_REF.finditer(text))
    for m in refs:
        n = numbers[bisect.bisect_right(offsets, m.start()) - 1]
        if m.group(1):
            target = find_md(root, path, m.group(1))
            if target is None:
                errors.append("%s:%d: %s: no such file" % (rel, n, m.group(1)))
                continue
            title = m.group(2)
        else:
            target, title = path, m.group(3) or m.group(4)
        want = norm(title)
        if not any(t.startswith(want) for t in titles(target)):
            errors.append("%s:%d: %s: no heading or title %r in %s" %
                          (rel, n, " ".join(m.group(0).split()), title,
                           os.path.relpath(target, root)))
    return len(refs), errors


def check_links(root, path):
    """(links, errors) of a file's markdown links."""
    errors = []
    count = 0
    rel = os.path.relpath(path, root)
    for n, line in prose_lines(path):
        targets = INLINE.findall(line)
        m = REFDEF.match(line)
        if m:
            targets.append(m.group(1))
        count += len(targets)
        for t in targets:
            if re.match(r'[a-z][a-z0-9+.-]*:', t, re.I):
                continue                        # http:, mailto:, ...
            file_part, _, anchor = t.partition("#")
            target = os.path.normpath(os.path.join(os.path.dirname(path),
                                                   file_part)) \
                if file_part else path
            if not os.path.exists(target):
                errors.append("%s:%d: %s: no file %s" %
                              (rel, n, t, os.path.relpath(target, root)))
                continue
            if anchor and target.endswith(".md") and \
                    anchor.lower() not in anchors(target):
                errors.append("%s:%d: %s: no heading #%s in %s" %
                              (rel, n, t, anchor,
                               os.path.relpath(target, root)))
    return count, errors


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    root = sys.argv[1]
    files = [os.path.join(root, "README.md")]
    for d, _, names in os.walk(os.path.join(root, "docs")):
        files += [os.path.join(d, f) for f in sorted(names) if f.endswith(".md")]
    errors = []
    links = refs = 0
    for path in sorted(files):
        n, e = check_links(root, path)
        links += n
        errors += e
        n, e = check_prose(root, path)
        refs += n
        errors += e
    for e in errors:
        print(e)
    print("%d markdown files: %d links, %d prose references, %d broken" %
          (len(files), links, refs, len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
