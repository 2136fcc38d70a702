#!/usr/bin/env python3
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
"""docs-check.py [--self-test]: the documentation says only what is true of the repository.

Checks, over README.md and every docs/**/*.md:
  - map:      docs/architecture.md has at most 200 lines, and no table cell of it is longer
              than three lines (300 characters);
  - names:    every `Class`, `Class#method`, `org.hadoophpc...` name and every repository or
              tarball path written in backticks (or as a relative link) exists: a class in our
              sources, in Hadoop's jars of the local Maven repository or in the JDK; a path in
              the repository, or in the tarball's source tree (bin/, sbin/, libexec/,
              etc/hadoop/, share/hadoop-hpc/);
  - history:  no "session N" or "issue N" in the docs, nor in the comments of any source file
              (java, C, shell, XML, CMake, Python), since neither exists for a reader.
Prints one line per problem (FILE:LINE: what) and a summary; exits 1 on any problem.
--self-test runs the checks on a planted bad document and fails unless each kind is caught.
"""
import os
import re
import subprocess
import sys
import tempfile
import zipfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAP = "docs/architecture.md"
MAP_MAX_LINES = 200
CELL_MAX_CHARS = 300
HISTORY = re.compile(r"\b(session|issue)s? #?[0-9]+", re.IGNORECASE)
SOURCE_EXT = (".java", ".c", ".h", ".sh", ".xml", ".py", ".cmake", ".txt", ".properties",
              ".sbatch", ".pbs", ".dot")
SKIP_DIRS = {".git", "target", "build", "node_modules"}
# Tarball paths and where their sources live in the repository.
TARBALL = {
    "bin/": "hadoop-dist/src/main/bin/",
    "sbin/": "hadoop-dist/src/main/sbin/",
    "libexec/": "hadoop-dist/src/main/libexec/",
    "etc/hadoop/": "hadoop-dist/src/main/conf/",
    "share/hadoop-hpc/": "hadoop-dist/src/main/share-hadoop-hpc/",
    "share/doc/hadoop-hpc/": "docs/",
}
REPO_TOPS = ("docs/", "dev-support/", "hadoop-", "rdma-native/", ".ci/")
# Names the docs may give that live outside our sources, Hadoop's jars and the JDK: Slurm's
# settings, JUnit's API, files a user or a stock Hadoop installation provides.
EXTERNAL = {
    "KillWait", "PropagateResourceLimits",  # slurm.conf
    "LauncherSessionListener",  # JUnit Platform
    "etc/hadoop/hadoop-user-functions.sh", "libexec/shellprofile.d/",  # the user's, stock's
}
# A class name: CamelCase with at least two humps (Transport is a word; TcpTransport a class),
# optionally Outer.Inner, #member or .member().
CLASS = re.compile(r"^([A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+)(?:\.[A-Z][A-Za-z0-9]+)*"
                   r"(?:[#.][a-z][A-Za-z0-9_]*(?:\([^)]*\))?)?$")
FQCN = re.compile(r"^((?:org|com|java|javax)\.[a-z0-9_.]+\.)([A-Z][A-Za-z0-9]*)"
                  r"(?:[#.][A-Za-z0-9_]+(?:\([^)]*\))?)?$")


def walk(root, exts):
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS]
        for f in files:
            if f.endswith(exts):
                yield os.path.join(d, f)


def docs(root):
    out = [os.path.join(root, "README.md")]
    out += sorted(walk(os.path.join(root, "docs"), (".md",)))
    return [p for p in out if os.path.isfile(p)]


def our_classes(root):
    names = set()
    decl = re.compile(r"\b(?:class|interface|enum|record|@interface)\s+([A-Z][A-Za-z0-9]*)")
    for p in walk(root, (".java",)):
        names.add(os.path.basename(p)[:-5])
        with open(p, encoding="utf-8", errors="replace") as f:
            names.update(decl.findall(f.read()))
    return names


def foreign_classes():
    """Simple and qualified names of Hadoop's classes (the local Maven repository) and the JDK's."""
    simple, qualified = set(), set()

    def add(entry):
        if not entry.endswith(".class"):
            return
        q = entry[:-6].replace("/", ".")
        qualified.add(q)
        qualified.add(q.replace("$", "."))
        for part in q.rsplit(".", 1)[-1].split("$"):
            simple.add(part)

    m2 = os.environ.get("HPC_M2", os.path.expanduser("~/.m2/repository"))
    hadoop = os.path.join(m2, "org", "apache", "hadoop")
    jars = [p for p in walk(hadoop, (".jar",)) if "hadoop-hpc" not in p] if os.path.isdir(hadoop) else []
    for j in jars:
        try:
            with zipfile.ZipFile(j) as z:
                for e in z.namelist():
                    add(e)
        except (zipfile.BadZipFile, OSError):
            pass
    java_home = os.environ.get("JAVA_HOME") or os.path.dirname(os.path.dirname(
        os.path.realpath(subprocess.run(["sh", "-c", "command -v javac"], capture_output=True,
                                        text=True).stdout.strip() or "/usr/bin/javac")))
    jimage = os.path.join(java_home, "bin", "jimage")
    if os.path.exists(jimage):
        out = subprocess.run([jimage, "list", os.path.join(java_home, "lib", "modules")],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            line = line.strip()
            if line.endswith(".class"):
                add(line)
    return simple, qualified, len(jars)


def spans(text):
    """(line number, code) for every `inline span` outside fenced blocks, and every relative link."""
    fenced = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        for m in re.finditer(r"`([^`]+)`", line):
            yield n, m.group(1), "code"
        for m in re.finditer(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", line):
            yield n, m.group(1), "link"


def path_exists(root, doc, token, kind):
    if kind == "link":
        if re.match(r"^[a-z]+:", token):
            return True
        return os.path.exists(os.path.normpath(os.path.join(os.path.dirname(doc), token)))
    if token in EXTERNAL:
        return True
    p = token.rstrip("/:,.")
    if os.path.exists(os.path.join(root, p)):
        return True
    for prefix, src in TARBALL.items():
        if (p + "/").startswith(prefix) and os.path.exists(
                os.path.join(root, src + (p + "/")[len(prefix):])):
            return True
    if p in tarball_members(root):
        return True
    # a file named relative to its module (src/main/..., src/test/...)
    if p.startswith("src/"):
        for d in os.listdir(root):
            for sub in ([d] + [os.path.join(d, x) for x in os.listdir(os.path.join(root, d))]
                        if os.path.isdir(os.path.join(root, d)) else []):
                if os.path.exists(os.path.join(root, sub, p)):
                    return True
    return False


_MEMBERS = {}


def tarball_members(root):
    """The paths in the built tarball (hadoop-dist/target), without its top directory: what the
    assembly adds beyond the sources (share/hadoop-hpc/bench/, lib/native/, ...)."""
    if root not in _MEMBERS:
        members = set()
        target = os.path.join(root, "hadoop-dist", "target")
        tars = [f for f in os.listdir(target) if f.endswith(".tar.gz")] if os.path.isdir(target) else []
        if tars:
            out = subprocess.run(["tar", "tzf", os.path.join(target, sorted(tars)[-1])],
                                 capture_output=True, text=True).stdout
            for line in out.splitlines():
                rest = line.split("/", 1)[1] if "/" in line else ""
                parts = rest.rstrip("/").split("/")
                for i in range(1, len(parts) + 1):  # the assembly lists files, not directories
                    members.add("/".join(parts[:i]))
        _MEMBERS[root] = members
    return _MEMBERS[root]


def looks_like_path(tok):
    if any(c in tok for c in " <>*{}$|[]=~"):
        return False
    if "/" not in tok or tok.startswith(("/", "http")):
        return False
    return tok.startswith(REPO_TOPS + tuple(TARBALL) + ("src/",))


def our_strings(root):
    """Every word of our Java sources that a metric's or a counter's name may come from: words in
    string literals, and identifiers (metrics2 names a metric after its field, AvgTime and
    NumOps added; counters and tags come from enum constants)."""
    words = set()
    for p in walk(root, (".java",)):
        with open(p, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for lit in re.findall(r'"([^"\\\n]*)"', text):
            words.update(re.findall(r"[A-Za-z][A-Za-z0-9_]*", lit))
        words.update(re.findall(r"\b[a-z][A-Za-z0-9]*\b|\b[A-Z][A-Z0-9_]*\b", text))
    return words


def metric_spellings(name):
    """The names in our sources a metric or counter NAME may be spelled from."""
    base = re.sub(r"(AvgTime|NumOps)$", "", name)
    out = {name, base, base[0].lower() + base[1:]}
    out.add(re.sub(r"(?<!^)(?=[A-Z])", "_", base).upper())  # NegativeCached -> NEGATIVE_CACHED
    humps = [m.start() for m in re.finditer(r"[A-Z]", base)]
    out.update(base[i:] for i in humps[1:-1])  # a name composed as prefix + "ConnectionsOverTcp"
    return out


def hadoop_members(names):
    """Those of NAMES that are a member (field, method, metric) of a Hadoop class, found in the
    class files' constant pools as Name or name: Hadoop's metrics are named after fields."""
    m2 = os.environ.get("HPC_M2", os.path.expanduser("~/.m2/repository"))
    hadoop = os.path.join(m2, "org", "apache", "hadoop")
    wanted = {}
    for n in names:
        wanted[n.encode()] = n
        wanted[(n[0].lower() + n[1:]).encode()] = n
    found = set()
    if not names or not os.path.isdir(hadoop):
        return found
    pattern = re.compile(b"|".join(re.escape(w) for w in sorted(wanted, key=len, reverse=True)))
    for j in walk(hadoop, (".jar",)):
        if "hadoop-hpc" in j or j.endswith("-sources.jar"):
            continue
        try:
            with zipfile.ZipFile(j) as z:
                for e in z.namelist():
                    if e.endswith(".class"):
                        for m in pattern.finditer(z.read(e)):
                            found.add(wanted[m.group(0)])
        except (zipfile.BadZipFile, OSError):
            pass
    return found


def check_names(root, files, ours, simple, qualified):
    problems = []
    unresolved = []  # (problem, simple name) of class-like names found nowhere yet
    strings = None
    for doc in files:
        rel = os.path.relpath(doc, root)
        with open(doc, encoding="utf-8") as f:
            text = f.read()
        for n, tok, kind in spans(text):
            tok = tok.strip()
            if kind == "link":
                if not path_exists(root, doc, tok, "link"):
                    problems.append(f"{rel}:{n}: link to {tok}, which does not exist")
                continue
            word = tok.split()[0] if tok.split() else tok
            if looks_like_path(word):
                if not path_exists(root, doc, word, "code"):
                    problems.append(f"{rel}:{n}: path `{word}` does not exist in the repository"
                                    " or the tarball's sources")
                continue
            if " " in tok or tok in EXTERNAL:
                continue
            m = FQCN.match(tok)
            if m:
                q = m.group(1) + m.group(2)
                if m.group(2) not in ours and q not in qualified:
                    problems.append(f"{rel}:{n}: class `{q}` exists in neither our sources,"
                                    " Hadoop nor the JDK")
                continue
            m = CLASS.match(tok)
            if m:
                outer = m.group(1)
                if outer not in ours and outer not in simple:
                    if strings is None:
                        strings = our_strings(root)
                    if not metric_spellings(outer) & strings:
                        unresolved.append((f"{rel}:{n}: class or metric `{outer}` exists in"
                                           " neither our sources, Hadoop nor the JDK", outer))
    members = hadoop_members({name for _, name in unresolved})
    problems += [p for p, name in unresolved if name not in members]
    return problems


def check_map(root):
    problems = []
    path = os.path.join(root, MAP)
    if not os.path.isfile(path):
        return [f"{MAP}: missing"]
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if len(lines) > MAP_MAX_LINES:
        problems.append(f"{MAP}: {len(lines)} lines, the map's limit is {MAP_MAX_LINES}")
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith("|") and not re.match(r"^\s*\|[\s:|-]+\|\s*$", line):
            for cell in line.strip().strip("|").split("|"):
                if len(cell.strip()) > CELL_MAX_CHARS:
                    problems.append(f"{MAP}:{n}: a table cell of {len(cell.strip())} characters"
                                    f" (at most three lines, {CELL_MAX_CHARS})")
    return problems


def comment_lines(path, text):
    """The lines of a source file that are comments (a history note in a string is rare)."""
    if path.endswith((".java", ".c", ".h", ".dot")):
        inside = False
        for n, line in enumerate(text.splitlines(), 1):
            s = line.strip()
            if inside or s.startswith(("/*", "*", "//")) or "//" in line or "/*" in line:
                yield n, line
            if "/*" in line and "*/" not in line.split("/*", 1)[1]:
                inside = True
            if inside and "*/" in line:
                inside = False
    elif path.endswith((".xml",)):
        inside = False
        for n, line in enumerate(text.splitlines(), 1):
            if inside or "<!--" in line:
                yield n, line
            if "<!--" in line and "-->" not in line.split("<!--", 1)[1]:
                inside = True
            elif inside and "-->" in line:
                inside = False
    else:
        for n, line in enumerate(text.splitlines(), 1):
            if "#" in line:
                yield n, line


def check_history(root, files, this_file):
    problems = []
    for doc in files:
        with open(doc, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if HISTORY.search(line):
                    problems.append(f"{os.path.relpath(doc, root)}:{n}: history in the docs:"
                                    f" \"{HISTORY.search(line).group(0)}\"")
    scripts = []
    for d in ("hadoop-dist/src/main/bin", "hadoop-dist/src/main/sbin", "dev-support/bin",
              "dev-support/bench", ".ci"):
        full = os.path.join(root, d)
        if os.path.isdir(full):
            scripts += [os.path.join(r, f) for r, _, fs in os.walk(full) for f in fs]
    for p in sorted(set(list(walk(root, SOURCE_EXT)) + scripts)):
        if os.path.abspath(p) == this_file:
            continue
        try:
            with open(p, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        for n, line in comment_lines(p, text):
            m = HISTORY.search(line)
            if m:
                problems.append(f"{os.path.relpath(p, root)}:{n}: history in a comment:"
                                f" \"{m.group(0)}\"")
    return problems


def run(root, foreign):
    ours = our_classes(root)
    simple, qualified, jars = foreign
    files = docs(root)
    problems = check_map(root)
    problems += check_names(root, files, ours, simple, qualified)
    problems += check_history(root, files, os.path.abspath(__file__))
    return problems, len(files), jars


def self_test(foreign):
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, "docs"))
        os.makedirs(os.path.join(t, "hadoop-x", "src", "main", "java"))
        with open(os.path.join(t, "hadoop-x", "src", "main", "java", "RealThing.java"), "w") as f:
            f.write("/* Written in session 12. */\nclass RealThing {}\n")
        with open(os.path.join(t, "README.md"), "w") as f:
            f.write("`RealThing` and `DataXceiverServer` exist; `NoSuchTransferPipe` does not.\n")
        with open(os.path.join(t, MAP), "w") as f:
            f.write("| a | " + "x" * 400 + " |\n" + "line\n" * 200
                    + "See `docs/missing.md` and [it](nowhere.md); measured in Session 4.\n")
        problems, _, _ = run(t, foreign)
    want = {"lines, the map's limit": 1, "table cell of": 1, "`NoSuchTransferPipe`": 1,
            "`docs/missing.md`": 1, "link to nowhere.md": 1, "history in the docs": 1,
            "history in a comment": 1}
    ok = True
    for what, count in want.items():
        got = sum(what in p for p in problems)
        print(f"  {'ok  ' if got == count else 'FAIL'} self-test: {what}: {got} of {count}")
        ok = ok and got == count
    if len(problems) != sum(want.values()):
        print("  FAIL self-test: other problems reported:\n    " + "\n    ".join(problems))
        ok = False
    return ok


def main():
    foreign = foreign_classes()
    if foreign[2] == 0:
        print("docs-check: no Hadoop jars in the local Maven repository: run the Maven build"
              " first (dev-support/bin/test does)")
        return 1
    if "--self-test" in sys.argv[1:]:
        ok = self_test(foreign)
        print(f"docs-check self-test: {'passed' if ok else 'FAILED'}")
        return 0 if ok else 1
    problems, ndocs, jars = run(REPO, foreign)
    for p in problems:
        print("  FAIL " + p)
    print(f"docs-check: {ndocs} documents, names checked against our sources, {jars} Hadoop"
          f" jars and the JDK; {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
