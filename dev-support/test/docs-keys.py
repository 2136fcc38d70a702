#!/usr/bin/env python3
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
"""docs-keys.py [--self-test]: the configuration keys the documentation shows are the shipped ones.

Our keys are hadoop.hpc.*, dfs.hpc.*, mapreduce.hpc.*, yarn.hpc.* and HiBD's spellings
(hadoop.ib.*, hadoop.roce.*, hadoop.rdma.*, dfs.rdma.*, mapred.rdma.*). Their reference is the
*-default.xml files under */src/main/resources, each shipped in its module's jar and kept equal
to its *ConfigKeys class by that class's test (ConfigKeysTestBase).

Checks:
  - tables:   every markdown table row of docs/user-guide.md, README.md and the tarball's
              share/hadoop-hpc/README.md and etc/hadoop/modes/README.md whose first cell starts
              with a backticked key of ours. Every backticked name in that cell must be a key of
              ours, written in full, that is in an XML file (or, on a line that says so, a
              deprecated name); in a table with a "default" column the default shown for the
              row's first key must be the XML's value. A default cell is read as: empty, "-" or
              a cell starting with "(" (a description such as "(empty: auto)") = the empty
              value; anything else up to a " (" that explains it, backticks removed
              ("0 (inherit)" = 0, "`16m`" = 16m).
  - mentions: every key of ours in a code span or a fenced code block anywhere in docs/**.md,
              README.md and the two READMEs above is in an XML file, or is a JVM system property
              of ours (read with System.getProperty & co. in our sources, or set in a pom), or is
              a deprecated name (a FOO_DEPRECATED_KEY of a *ConfigKeys class) on a line that
              says deprecated, old or formerly, or one of HiBD's keys the user guide lists as
              having no counterpart here (HIBD_NOT_ACCEPTED). `prefix.*`, `prefix.` name groups of keys and
              `a.{b,c}` / `a[.b]` abbreviate several; each must name at least one key.
Prints one line per problem (FILE:LINE: what) and "docs-keys: N keys checked, M problems";
exits 1 on any problem. --self-test runs the checks on planted documents and fails unless each
kind of problem is caught and a correct document passes.
"""
import glob
import itertools
import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLE_DOCS = ["docs/user-guide.md", "README.md",
              "hadoop-dist/src/main/share-hadoop-hpc/README.md",
              "hadoop-dist/src/main/conf/modes/README.md"]
OURS = r"(?:hadoop\.hpc|dfs\.hpc|mapreduce\.hpc|yarn\.hpc|hadoop\.ib|hadoop\.roce|hadoop\.rdma" \
       r"|dfs\.rdma|mapred\.rdma)"
# A key of ours as written in a doc: dot-separated words, with {a,b} and [.x] abbreviations; not
# inside another name (but after -D, as on a command line).
MENTION = re.compile(r"(?:(?<=-D)|(?<![A-Za-z0-9_.-]))" + OURS
                     + r"(?:[A-Za-z0-9_-]|\.(?=[A-Za-z0-9_{\[])|\{[^}]*\}|\[[^\]]*\])*")
FULL_KEY = re.compile(OURS + r"(?:\.[A-Za-z0-9_-]+)+$")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
SAYS_OLD = re.compile(r"\b(deprecated|old|formerly)\b", re.IGNORECASE)
SEPARATOR = re.compile(r"^\|(\s*:?-+:?\s*\|)+\s*$")
SKIP_DIRS = {".git", "target", "node_modules"}
# HiBD's keys that hadoop-hpc deliberately does not read; the user guide's HiBD table says so.
HIBD_NOT_ACCEPTED = {"mapred.rdma.developer.mode"}


def xml_keys(repo):
    """Key -> value ("" when empty) of every *-default.xml under */src/main/resources."""
    keys = {}
    for path in sorted(glob.glob(os.path.join(repo, "**", "src", "main", "resources",
                                              "*-default.xml"), recursive=True)):
        if "/target/" in path:
            continue
        for prop in ET.parse(path).getroot().iter("property"):
            name = (prop.findtext("name") or "").strip()
            if name:
                keys[name] = (prop.findtext("value") or "").strip()
    return keys


def java_files(repo):
    for d, dirs, files in os.walk(repo):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS]
        for f in files:
            if f.endswith(".java"):
                yield os.path.join(d, f)


def deprecated_keys(repo):
    """Old name -> new name, from the FOO_DEPRECATED_KEY / FOO_KEY pairs of *ConfigKeys."""
    out = {}
    const = re.compile(r"public static final String (\w+)\s*=\s*\"([^\"]+)\"", re.S)
    for path in java_files(repo):
        if not path.endswith("ConfigKeys.java") or "/src/main/" not in path:
            continue
        with open(path, encoding="utf-8") as f:
            values = dict(const.findall(f.read()))
        for name, value in values.items():
            if name.endswith("_DEPRECATED_KEY"):
                out[value] = values.get(name[:-len("_DEPRECATED_KEY")] + "_KEY", "?")
    return out


def system_properties(repo):
    """JVM system properties our code or build reads (not configuration keys)."""
    props = set()
    java = re.compile(r"(?:System\.getProperty|Boolean\.getBoolean|Integer\.getInteger"
                      r"|Long\.getLong)\(\s*\"([^\"]+)\"|\w+_PROPERTY\s*=\s*\"([^\"]+)\"")
    for path in java_files(repo):
        with open(path, encoding="utf-8") as f:
            for a, b in java.findall(f.read()):
                props.add(a or b)
    pom = re.compile(r"<systemPropertyVariables>(.*?)</systemPropertyVariables>", re.S)
    for path in glob.glob(os.path.join(repo, "**", "pom.xml"), recursive=True):
        if "/target/" in path:
            continue
        with open(path, encoding="utf-8") as f:
            for block in pom.findall(f.read()):
                props.update(re.findall(r"<([A-Za-z0-9_.-]+)>", block))
    return {p for p in props if re.match(OURS + r"\.", p)}


def expand(written):
    """The names a mention abbreviates: {a,b} alternatives, [.x] optional parts."""
    parts = re.split(r"(\{[^}]*\}|\[[^\]]*\])", written)
    choices = []
    for p in parts:
        if p.startswith("{"):
            choices.append(p[1:-1].split(","))
        elif p.startswith("["):
            choices.append(["", p[1:-1]])
        else:
            choices.append([p])
    return ["".join(c) for c in itertools.product(*choices)]


class Checker:
    def __init__(self, repo):
        self.repo = repo
        self.keys = xml_keys(repo)
        self.deprecated = deprecated_keys(repo)
        self.properties = system_properties(repo)
        self.problems = []
        self.checked = set()

    def problem(self, where, what):
        self.problems.append(f"{where}: {what}")

    def known(self, name, line, where, prefix=False):
        """Whether name (a key, or with prefix=True a group of keys) is ours; reports if not."""
        self.checked.add(name)
        if prefix:
            if not any(k.startswith(name) for k in self.keys):
                self.problem(where, f"`{name}*` names no key of any *-default.xml")
            return
        if name in self.keys or name in self.properties or name in HIBD_NOT_ACCEPTED:
            return
        if name in self.deprecated:
            if not SAYS_OLD.search(CODE_SPAN.sub("", line)):
                self.problem(where, f"{name} is deprecated: write {self.deprecated[name]}"
                             " (or say on the line that the old name is deprecated)")
            return
        self.problem(where, f"{name} is in no *-default.xml")

    def mentions(self, rel, text):
        fenced = False
        for n, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            spans = [line] if fenced else CODE_SPAN.findall(line)
            for span in spans:
                for m in MENTION.finditer(span):
                    after = span[m.end():m.end() + 1]
                    for name in expand(m.group(0)):
                        if after in ("*", "."):
                            self.known(name + after.replace("*", ""), line, f"{rel}:{n}",
                                       prefix=True)
                        else:
                            self.known(name, line, f"{rel}:{n}")

    def tables(self, rel, text):
        lines = text.splitlines()
        n = 0
        while n < len(lines):
            if not (lines[n].startswith("|") and n + 1 < len(lines)
                    and SEPARATOR.match(lines[n + 1])):
                n += 1
                continue
            header = [c.lower() for c in cells(lines[n])]
            default = next((i for i, c in enumerate(header) if "default" in c), None)
            n += 2
            while n < len(lines) and lines[n].startswith("|"):
                self.row(rel, n + 1, lines[n], default)
                n += 1

    def row(self, rel, n, line, default):
        where = f"{rel}:{n}"
        row = cells(line)
        spans = CODE_SPAN.findall(row[0]) if row else []
        if not spans or not re.match(OURS + r"\.", spans[0]):
            return
        for span in spans:
            if not FULL_KEY.match(span):
                self.problem(where, f"`{span}` in a key table's first cell: write each key of"
                             " ours in full, one name per backtick pair")
        first = spans[0]
        if default is None or default >= len(row) or not FULL_KEY.match(first):
            return
        if first not in self.keys:
            return  # reported by the mentions check
        shown, actual = shown_default(row[default]), self.keys[first]
        if shown != actual:
            self.problem(where, f"{first}: the table shows the default '{shown}', the XML has"
                         f" '{actual}'")

    def run(self):
        docs = sorted(glob.glob(os.path.join(self.repo, "docs", "**", "*.md"), recursive=True))
        docs += [os.path.join(self.repo, d) for d in TABLE_DOCS]
        for path in sorted(set(docs)):
            if not os.path.isfile(path):
                continue
            rel = os.path.relpath(path, self.repo)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            self.mentions(rel, text)
            if rel in TABLE_DOCS:
                self.tables(rel, text)
        return self.problems


def cells(line):
    """The cells of a table row; a | inside backticks does not split."""
    out, cur, code = [], "", False
    for ch in line.strip().strip("|"):
        if ch == "`":
            code = not code
        if ch == "|" and not code:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    out.append(cur.strip())
    return out


def shown_default(cell):
    c = cell.strip()
    if c in ("", "-", "—", "–") or c.startswith("("):
        return ""
    c = re.sub(r"\s+\(.*$", "", c)
    return c.replace("`", "").strip()


def self_test():
    """Plants a repository with one XML, one keys class and documents with each problem."""
    with tempfile.TemporaryDirectory() as repo:
        res = os.path.join(repo, "m", "src", "main", "resources")
        src = os.path.join(repo, "m", "src", "main", "java")
        os.makedirs(res)
        os.makedirs(src)
        os.makedirs(os.path.join(repo, "docs"))
        with open(os.path.join(res, "x-default.xml"), "w", encoding="utf-8") as f:
            f.write("<configuration><property><name>hadoop.hpc.a.b</name><value>4k</value>"
                    "</property><property><name>dfs.hpc.c</name><value></value></property>"
                    "</configuration>")
        with open(os.path.join(src, "XConfigKeys.java"), "w", encoding="utf-8") as f:
            f.write('public static final String B_KEY = "hadoop.hpc.a.b";\n'
                    'public static final String B_DEPRECATED_KEY =\n    "hadoop.hpc.a.old";\n'
                    'String p = System.getProperty("hadoop.hpc.lib");\n')
        good = ("| key | default | meaning |\n|---|---|---|\n"
                "| `hadoop.hpc.a.b` | 4k | x |\n| `dfs.hpc.c` | (empty: none) | y |\n"
                "| `dfs.hpc.c` | — | y |\n| `fs.other` | 1 | stock |\n\n"
                "`hadoop.hpc.a.*`, `-Dhadoop.hpc.lib=/x`, `hadoop.hpc.a.{b}`, "
                "`hadoop.hpc.a.b[.c]` is wrong but `hadoop.hpc.a.old` is the deprecated name\n"
                "```\n<name>dfs.hpc.c</name>\n```\n")
        bad = ("| key | default | meaning |\n|---|---|---|\n"
               "| `hadoop.hpc.a.b` | 8k | wrong default |\n"
               "| `hadoop.hpc.a.b` / `old.b` | 4k | abbreviated |\n"
               "| `dfs.hpc.nope` | 1 | missing |\n\n"
               "use `hadoop.hpc.a.old=true` here\n`mapred.rdma.zzz.*`\n"
               "```\n-Ddfs.hpc.gone=1\n```\n")
        expected = ["default '8k'", "`old.b`", "dfs.hpc.nope is in no", "hadoop.hpc.a.old is"
                    " deprecated", "`mapred.rdma.zzz.*` names no key", "dfs.hpc.gone is in no",
                    "hadoop.hpc.a.b.c is in no"]
        for name, text in (("user-guide.md", good), ("bad.md", bad)):
            with open(os.path.join(repo, "docs", name), "w", encoding="utf-8") as f:
                f.write(text)
        with open(os.path.join(repo, "README.md"), "w", encoding="utf-8") as f:
            f.write(bad)
        problems = Checker(repo).run()
        ok = True
        for e in expected:
            if not any(e in p for p in problems):
                print(f"docs-keys self-test: not caught: {e}")
                ok = False
        stray = [p for p in problems if p.startswith("docs/user-guide.md")
                 and "hadoop.hpc.a.b.c" not in p]
        for p in stray:
            print(f"docs-keys self-test: a correct line was reported: {p}")
            ok = False
        if not any(p.startswith("README.md") and "default '8k'" in p for p in problems):
            print("docs-keys self-test: README.md's table was not checked")
            ok = False
    print(f"docs-keys self-test: {'passed' if ok else 'FAILED'}")
    return 0 if ok else 1


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if argv[1:]:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    checker = Checker(REPO)
    if not checker.keys:
        print("docs-keys: no *-default.xml under */src/main/resources", file=sys.stderr)
        return 1
    problems = checker.run()
    for p in problems:
        print(p)
    print(f"docs-keys: {len(checker.checked)} keys checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
