#!/usr/bin/env python3
# Docs that cannot drift: checks the citations in docs/*.md, README.md and code comments
# against the repository. Python 3 standard library only.
#
#   scripts/check_docs.py [ROOT]                        check; exit 1 with one `file:line: what`
#                                                       line per problem, else exit 0 and a summary
#   scripts/check_docs.py --extract-library-blocks DIR  write each ```cpp / ```c++ block of
#                                                       docs/LIBRARY.md to DIR/block_01.cc, 02, ...
#
# What is read: README.md and docs/*.md (the whole text, code blocks included), and the comments
# of the tracked sources: `//` and `/* */` comments in *.cc, *.h, *.cpp; `#` comments in *.sh,
# *.py, CMakeLists.txt, *.cmake (string literals are skipped; a `#!` first line is not a comment).
# The file list is `git ls-files` (tracked plus untracked, not ignored) when ROOT is a git
# checkout, else every file below ROOT outside build*/ and .git/.
#
# Checks:
#  a. Repository paths. A token counts as a path when its first component is a top-level entry
#     of the repository (a directory such as `page`, `tests`, `perf`, or a file such as
#     `README.md`, `CMakeLists.txt`) and it has a `/`; `../x`, `build/...` and Firebird's own
#     `src/jrd/btr.cpp` are not ours and are not read as paths, nor are rates (`keys/s`) and
#     placeholders (`page/...`). It must exist. `<pbtree/keys.h>` must exist as
#     include/pbtree/keys.h. Braces are expanded (`node/{node,jump_table}.h`: every alternative
#     must exist); `*`, `?` and `[..]` are globs that must match at least one file
#     (`tests/cli/*_test.cc`). A `*.md` name without a directory (`FORMAT.md`) must name exactly
#     one file of the repository by its base name. A markdown link `[..](target#anchor)` must
#     lead to an existing file, and its anchor to a heading of that file (GitHub's anchor
#     rule). URLs are skipped.
#  b. Citations outside the repository: any `../shared/` path, and the notes under it by name
#     (`firebird-format.md`), in a comment or a doc. Comments cite Firebird's own sources
#     instead ("Firebird v5.0.4 src/jrd/btr.cpp"). Allowed: `../shared/data/...` anywhere (where
#     the test data lives, read in place at run time), and `../shared/checks/...` in docs and in
#     a comment when the same file's code uses that path (scripts/test.sh runs the seed check).
#  c. Section numbers `§N`, `§N.M`, `§N.Ma`. The document is the last `*.md` named before the
#     `§` on its line or on the two lines above; otherwise, in a markdown file, the file itself,
#     and in a code comment, docs/FORMAT.md. The number must be one of that document's heading
#     numbers (`## 3.` gives 3, `### 3.4` gives 3.4); so must `FORMAT.md 2.7` (a number right
#     after a document's name, without the §). A section cited by name, `FORMAT.md "Log
#     file"`, must be part of a heading of that document (case-insensitive).
#  d. Copies of files. A code block in a doc whose preceding paragraph says "This is `path`"
#     must be that file, line for line (docs/LIBRARY.md's second example is
#     tests/consumer/raw_tree.cc, which the install_consumer test builds and runs).
# What it cannot see: a number that exists but now names another section (after a
# renumbering, grep the old numbers), and prose that is wrong. This script's own comments are
# not checked (they show what fails).
import fnmatch
import os
import re
import subprocess
import sys
import time

# Installed headers generated at configure time (not in the source tree): <pbtree/version.h>
# from cmake/version.h.in.
GENERATED_HEADERS = {"version.h"}

SELF = "scripts/check_docs.py"
DOC_GLOBS = ("README.md", "docs/*.md")
SLASH_COMMENT_EXT = (".cc", ".h", ".cpp")
HASH_COMMENT_EXT = (".sh", ".py", ".cmake")
ALLOWED_SHARED = ("checks",)  # ../shared/data is always allowed
OUTSIDE_NOTES = ("firebird-format.md",)  # ../shared/reference's notes, cited by name

PATH_RE = re.compile(r"(?<![\w.\-/<@$~])((?:[A-Za-z0-9_.\-*?{},\[\]]+/)+[A-Za-z0-9_.\-*?{},\[\]]*)")
PBTREE_INCLUDE_RE = re.compile(r"<pbtree/([A-Za-z0-9_./]+)>")
MD_NAME_RE = re.compile(r"(?<![\w.\-/])((?:[A-Za-z0-9_.\-]+/)*[A-Za-z0-9_\-]+\.md)\b")
SECTION_RE = re.compile(r"§\s?(\d+(?:\.\d+)*[a-z]?)")
DOC_NUMBER_RE = re.compile(r"((?:[A-Za-z0-9_.\-]+/)*[A-Za-z0-9_\-]+\.md),? (\d+(?:\.\d+)+[a-z]?)\b")
NAMED_SECTION_RE = re.compile(r"((?:[A-Za-z0-9_.\-]+/)*[A-Za-z0-9_\-]+\.md),?\s+[\"“]([^\"”]+)[\"”]")
URL_RE = re.compile(r"[a-z][a-z0-9+.\-]*://\S+")
MD_LINK_RE = re.compile(r"\]\(([^)\s]+)\)")
HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
HEADING_NUMBER_RE = re.compile(r"^(\d+(?:\.\d+)*[a-z]?)\.?(?:\s|$)")


def repo_files(root):
    try:
        out = subprocess.run(
            ["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            capture_output=True, check=True).stdout.decode()
        files = [f for f in out.split("\0") if f]
        if files:
            return sorted(f for f in set(files) if os.path.isfile(os.path.join(root, f)))
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, dirs, names in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = [x for x in dirs if x != ".git" and not (rel == "." and x.startswith("build"))]
        files += [os.path.normpath(os.path.join(rel, n)) for n in names]
    return sorted(files)


class Repo:
    def __init__(self, root):
        self.root = root
        self.files = repo_files(root)
        self.file_set = set(self.files)
        self.dirs = set()
        for f in self.files:
            parts = f.split("/")
            for i in range(1, len(parts)):
                self.dirs.add("/".join(parts[:i]))
        self.top = {f.split("/")[0] for f in self.files} - {"build"}
        self.md_by_base = {}
        for f in self.files:
            if f.endswith(".md"):
                self.md_by_base.setdefault(os.path.basename(f), []).append(f)
        self._headings = {}

    def exists(self, rel):
        rel = os.path.normpath(rel).rstrip("/") if rel not in ("", ".") else "."
        return rel == "." or rel in self.file_set or rel in self.dirs

    def glob_matches(self, pattern):
        pattern = pattern.rstrip("/")
        return [p for p in list(self.file_set) + list(self.dirs) if fnmatch.fnmatchcase(p, pattern)
                and p.count("/") == pattern.count("/")]

    def headings(self, rel):
        """(numbers, titles, anchors) of a markdown file's headings outside code fences."""
        if rel not in self._headings:
            numbers, titles, anchors, seen = set(), [], set(), {}
            fence = False
            for line in read_lines(os.path.join(self.root, rel)):
                if line.lstrip().startswith("```"):
                    fence = not fence
                    continue
                m = None if fence else HEADING_RE.match(line)
                if not m:
                    continue
                title = m.group(2)
                titles.append(title)
                n = HEADING_NUMBER_RE.match(title)
                if n:
                    numbers.add(n.group(1))
                slug = github_slug(title)
                k = seen.get(slug, 0)
                seen[slug] = k + 1
                anchors.add(slug if k == 0 else f"{slug}-{k}")
            self._headings[rel] = (numbers, titles, anchors)
        return self._headings[rel]

    def resolve_md(self, name, from_file):
        """Repository path of a cited markdown name, or None."""
        for cand in (name, os.path.normpath(os.path.join(os.path.dirname(from_file), name))):
            if cand in self.file_set:
                return cand
        hits = self.md_by_base.get(os.path.basename(name), [])
        return hits[0] if len(hits) == 1 and "/" not in name else None


def github_slug(title):
    s = title.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def read_lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read().split("\n")


def expand_braces(s):
    m = re.search(r"\{([^{}]*)\}", s)
    if not m:
        return [s]
    out = []
    for alt in m.group(1).split(","):
        out += expand_braces(s[:m.start()] + alt + s[m.end():])
    return out


# ---- comments of source files: [(line number, comment text, code text of the file)] ----

C_TOKEN_RE = re.compile(
    r'(?P<raw>(?<!\w)(?:u8|u|U|L)?R"(?P<delim>[^(\s]*)\((?:.|\n)*?\)(?P=delim)")'
    r'|(?P<line>//[^\n]*)'
    r'|(?P<block>/\*(?:.|\n)*?(?:\*/|$))'
    r'|(?P<str>"(?:\\.|[^"\\\n])*")'
    r"|(?P<chr>(?<![0-9A-Za-z])'(?:\\.|[^'\\\n])*')")


def slash_comments(text):
    """// and /* */ comments of C/C++ text, per line; string and char literals skipped."""
    out, code = [], []
    pos, line = 0, 1
    for m in C_TOKEN_RE.finditer(text):
        code.append(text[pos:m.start()])
        line += text.count("\n", pos, m.start())
        tok = m.group(0)
        if m.group("line") is not None:
            out.append((line, tok[2:]))
        elif m.group("block") is not None:
            body = tok[2:-2] if tok.endswith("*/") else tok[2:]
            for k, part in enumerate(body.split("\n")):
                out.append((line + k, part))
        else:
            code.append(tok)
        line += tok.count("\n")
        pos = m.end()
    code.append(text[pos:])
    return out, "".join(code)


def hash_comments(text):
    """# comments of shell, Python and CMake text; quotes on the line skipped."""
    out, code = [], []
    for no, line in enumerate(text.split("\n"), 1):
        if no == 1 and line.startswith("#!"):
            continue
        quote, k = None, None
        for i, c in enumerate(line):
            if quote:
                if c == "\\":
                    continue
                if c == quote:
                    quote = None
            elif c in "\"'":
                quote = c
            elif c == "#" and (i == 0 or line[i - 1] in " \t;(") and not line[:i].endswith("$"):
                k = i
                break
        if k is None:
            code.append(line)
        else:
            out.append((no, line[k + 1:]))
            code.append(line[:k])
    return out, "\n".join(code)


# ---- the checks ----

class Checker:
    def __init__(self, root):
        self.repo = Repo(root)
        self.problems = []
        self.counts = {"files": 0, "paths": 0, "sections": 0, "links": 0}

    def problem(self, rel, line, what):
        self.problems.append(f"{rel}:{line}: {what}")

    def run(self):
        docs = [f for f in self.repo.files if any(fnmatch.fnmatchcase(f, g) for g in DOC_GLOBS)
                and "/" not in f.split("docs/", 1)[-1]]
        for rel in docs:
            lines = read_lines(os.path.join(self.repo.root, rel))
            self.check_lines(rel, list(enumerate(lines, 1)), is_doc=True, code="")
            self.check_links(rel, lines)
            self.check_copies(rel, lines)
        for rel in self.repo.files:
            base = os.path.basename(rel)
            if rel == SELF:
                continue  # its comments state the rules, with examples of what fails
            if rel.endswith(SLASH_COMMENT_EXT):
                comments, code = slash_comments(self.read(rel))
            elif rel.endswith(HASH_COMMENT_EXT) or base == "CMakeLists.txt":
                comments, code = hash_comments(self.read(rel))
            else:
                continue
            self.check_lines(rel, comments, is_doc=False, code=code)
        return self.problems

    def read(self, rel):
        self.counts["files"] += 1
        with open(os.path.join(self.repo.root, rel), encoding="utf-8", errors="replace") as f:
            return f.read()

    def check_lines(self, rel, lines, is_doc, code):
        if is_doc:
            self.counts["files"] += 1
        history = []  # (line number, text) of the lines before, for the § document rule
        for no, text in lines:
            text_nourl = URL_RE.sub(" ", text)
            self.check_outside(rel, no, text_nourl, is_doc, code)
            self.check_paths(rel, no, text_nourl)
            self.check_sections(rel, no, text_nourl, history, is_doc)
            history = (history + [(no, text_nourl)])[-2:]

    def check_outside(self, rel, no, text, is_doc, code):
        for m in re.finditer(r"(?:\.\./)+shared/[\w./\-]*", text):
            path = m.group(0)
            stem = re.match(r"(?:\.\./)+shared/[\w\-]*", path).group(0)
            area = stem.rsplit("/", 1)[-1]
            if area == "data" or (area in ALLOWED_SHARED and (is_doc or stem in code)):
                continue
            self.problem(rel, no, f"`{path}` is outside the repository: cite Firebird's own source "
                         "(e.g. Firebird v5.0.4 src/jrd/btr.cpp) or a file of this repository")
        for name in OUTSIDE_NOTES:
            for m in re.finditer(r"(?<![\w/.\-])" + re.escape(name), text):
                if text[:m.start()].endswith("reference/"):
                    continue
                self.problem(rel, no, f"`{name}` is not in the repository (../shared/reference): "
                             "cite Firebird's own source (e.g. Firebird v5.0.4 src/jrd/btr.cpp)")

    def check_paths(self, rel, no, text):
        for m in PATH_RE.finditer(text):
            tok = m.group(1)
            start = m.start(1)
            if text[max(0, start - 3):start] == "../" or tok.startswith("../"):
                continue
            tok = tok.rstrip(".,;:")
            if tok.endswith(("/s", "/...")) or "/.../" in tok:  # a rate (keys/s), a placeholder
                continue
            first = tok.split("/", 1)[0]
            if first not in self.repo.top or first in ("", ".", ".."):
                continue
            if "{" in tok and "}" not in tok:  # `{a,b}` cut by the regex: take the prefix
                tok = tok[:tok.index("{")]
            tok = tok.replace("{}", "")
            self.counts["paths"] += 1
            for alt in expand_braces(tok):
                if any(ch in alt for ch in "*?["):
                    if not self.repo.glob_matches(alt):
                        self.problem(rel, no, f"`{alt}` matches no file of the repository")
                elif not self.repo.exists(alt):
                    self.problem(rel, no, f"`{alt}` does not exist")
        for m in re.finditer(r"(?<![\w./\-])(README\.md|CMakeLists\.txt)\b", text):
            self.counts["paths"] += 1
        for m in PBTREE_INCLUDE_RE.finditer(text):
            if m.group(1).startswith("..."):
                continue
            self.counts["paths"] += 1
            if m.group(1) in GENERATED_HEADERS:
                continue
            if not self.repo.exists("include/pbtree/" + m.group(1)):
                self.problem(rel, no, f"`<pbtree/{m.group(1)}>`: include/pbtree/{m.group(1)} does not exist")
        for m in MD_NAME_RE.finditer(text):
            name = m.group(1)
            if "/" in name or name in OUTSIDE_NOTES or text[:m.start()].endswith(("../", "](")):
                continue  # paths are checked above
            self.counts["paths"] += 1
            if self.repo.resolve_md(name, rel) is None:
                n = len(self.repo.md_by_base.get(name, []))
                what = "names several files" if n > 1 else "is not a file of the repository"
                self.problem(rel, no, f"`{name}` {what}")

    def doc_before(self, rel, text, upto, history):
        """The last markdown document named before position `upto` of `text`, or on the lines above."""
        for t in [text[:upto]] + [h[1] for h in reversed(history)]:
            names = [m for m in MD_NAME_RE.finditer(t)]
            if names:
                return names[-1].group(1)
        return None

    def check_sections(self, rel, no, text, history, is_doc):
        for m in SECTION_RE.finditer(text):
            self.counts["sections"] += 1
            num = m.group(1)
            name = self.doc_before(rel, text, m.start(), history)
            if name is not None and os.path.basename(name) in OUTSIDE_NOTES:
                continue  # reported by check_outside
            if name is None:
                target = rel if is_doc else "docs/FORMAT.md"
            elif name in OUTSIDE_NOTES:
                continue  # reported by check_outside
            else:
                target = self.repo.resolve_md(name, rel)
                if target is None:
                    self.problem(rel, no, f"§{num}: `{name}` is not a file of the repository")
                    continue
            numbers = self.repo.headings(target)[0]
            if num not in numbers:
                self.problem(rel, no, f"§{num}: {target} has no section {num}")
        for m in DOC_NUMBER_RE.finditer(text):  # `FORMAT.md 2.7`, without the §
            name, num = m.group(1), m.group(2)
            target = None if os.path.basename(name) in OUTSIDE_NOTES else self.repo.resolve_md(name, rel)
            if target is None:
                continue  # reported by check_paths or check_outside
            self.counts["sections"] += 1
            if num not in self.repo.headings(target)[0]:
                self.problem(rel, no, f"{name} {num}: {target} has no section {num}")
        for m in NAMED_SECTION_RE.finditer(text):
            name, section = m.group(1), m.group(2)
            if name in OUTSIDE_NOTES:
                continue
            target = self.repo.resolve_md(name, rel)
            if target is None:
                continue  # reported by check_paths
            self.counts["sections"] += 1
            titles = self.repo.headings(target)[1]
            if not any(section.lower() in t.lower() for t in titles):
                self.problem(rel, no, f"{target} has no section named \"{section}\"")

    def check_links(self, rel, lines):
        fence = False
        for no, line in enumerate(lines, 1):
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            if fence:
                continue
            for m in MD_LINK_RE.finditer(line):
                target = m.group(1)
                if re.match(r"[a-z][a-z0-9+.\-]*:", target):
                    continue
                self.counts["links"] += 1
                path, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(rel), path)) if path else rel
                if dest.startswith(".."):
                    self.problem(rel, no, f"link `{target}` leaves the repository")
                    continue
                if not self.repo.exists(dest):
                    self.problem(rel, no, f"link `{target}`: {dest} does not exist")
                    continue
                if anchor and dest.endswith(".md") and anchor not in self.repo.headings(dest)[2]:
                    self.problem(rel, no, f"link `{target}`: {dest} has no heading #{anchor}")


    def check_copies(self, rel, lines):
        # (d): "This is `path`" in the paragraph before a ``` block: the block is that file.
        para_start, last_para = 0, ""
        i = 0
        while i < len(lines):
            s = lines[i].strip()
            if s.startswith("```"):
                block, j = [], i + 1
                while j < len(lines) and not lines[j].strip().startswith("```"):
                    block.append(lines[j])
                    j += 1
                before = " ".join(lines[para_start:i]).strip() or last_para
                m = re.search(r"This is `([^`]+)`", before)
                if m:
                    target = m.group(1)
                    if not self.repo.exists(target):
                        self.problem(rel, i + 1, f"block copies `{target}`, which does not exist")
                    else:
                        want = read_lines(os.path.join(self.repo.root, target))
                        while want and want[-1] == "":
                            want.pop()
                        if block != want:
                            k = next((n for n, (a, b) in enumerate(zip(block, want))
                                      if a != b), min(len(block), len(want)))
                            self.problem(rel, i + 2 + k,
                                         f"block differs from `{target}` at its line {k + 1}")
                i = j + 1
                para_start, last_para = i, ""
                continue
            if s == "":
                if i > para_start:
                    last_para = " ".join(lines[para_start:i])
                para_start = i + 1
            i += 1

def extract_library_blocks(root, outdir):
    lines = read_lines(os.path.join(root, "docs/LIBRARY.md"))
    os.makedirs(outdir, exist_ok=True)
    blocks, cur = [], None
    for line in lines:
        s = line.strip()
        if cur is None and re.fullmatch(r"```\s*(cpp|c\+\+)\s*", s, re.I):
            cur = []
        elif cur is not None and s.startswith("```"):
            blocks.append(cur)
            cur = None
        elif cur is not None:
            cur.append(line)
    for i, b in enumerate(blocks, 1):
        path = os.path.join(outdir, f"block_{i:02d}.cc")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(b) + "\n")
        print(path)
    return 0


def main(argv):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if len(argv) >= 2 and argv[1] == "--extract-library-blocks":
        if len(argv) not in (3, 4):
            print("usage: check_docs.py --extract-library-blocks OUTDIR [ROOT]", file=sys.stderr)
            return 2
        return extract_library_blocks(argv[3] if len(argv) == 4 else here, argv[2])
    if len(argv) > 2 or (len(argv) == 2 and argv[1].startswith("-")):
        print("usage: check_docs.py [ROOT] | --extract-library-blocks OUTDIR [ROOT]", file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else here
    t0 = time.monotonic()
    checker = Checker(root)
    problems = checker.run()
    for p in problems:
        print(p)
    c = checker.counts
    if problems:
        print(f"check_docs: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"check_docs: OK: {c['files']} files, {c['paths']} paths, {c['sections']} section references, "
          f"{c['links']} links checked in {time.monotonic() - t0:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
