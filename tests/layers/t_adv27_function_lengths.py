#!/usr/bin/env python3
"""adv-27: function_lengths.py's scanner on code written to slip past it. Each text below holds
one function of 101+ lines the scanner must count, or code it must refuse to guess at (Unread,
which the test reports as a failure naming the file and line): never a silent skip.
  t_adv27_function_lengths.py DIR_OF_function_lengths.py"""
import sys

sys.path.insert(0, sys.argv[1] if len(sys.argv) > 1 else ".")
import function_lengths as fl  # noqa: E402

BODY = "  x++;\n" * 101
CASES = [
    # (what, text, the (name, line count) rows wanted, or "unread")
    ("digraph braces", "int dg(int x) <%\n" + BODY + "%>\n", [("dg", 103)]),
    ("a function returning a function pointer", "static void (*pick(int k))(int) {\n" + BODY + "}\n",
     [("pick", 103)]),
    ("a K&R definition", "int knr(a, b)\nint a;\nint b;\n{\n" + BODY + "}\n", "unread"),
    ("a body opened by a macro", "#define BEGIN {\nint m(void) BEGIN\n" + BODY + "}\nint after(void) {\n" + BODY + "}\n",
     "unread"),
    ("two heads under #if", "#ifdef X\nint f(int a) {\n#else\nint f(int a, int b) {\n#endif\n" + BODY + "}\n",
     "unread"),
    ("a brace in a string and a comment", "int s(void) {\n  const char *t = \"}\"; /* } */\n" + BODY + "}\n",
     [("s", 104)]),
    ("a function pointer typedef and a compound literal",
     "typedef int (*Fn)(int);\nstatic const struct P { int a; } kP = (struct P){1};\nint g(Fn f) {\n" + BODY + "}\n",
     [("g", 103)]),
]


def main():
    fail = 0
    for what, text, want in CASES:
        try:
            got = [(n, length) for n, _, length in fl.functions(text)]
        except fl.Unread as e:
            got = "unread"
            why = str(e)
        if got != want:
            print(f"FAIL {what}: the scanner read {got}, want {want}")
            fail += 1
        else:
            print(f"ok   {what}" + (f" (unread: {why})" if got == "unread" else ""))
    print(f"{len(CASES) - fail} passed, {fail} failed")
    return 1 if fail else 0


if __name__ == "__main__":
    sys.exit(main())
