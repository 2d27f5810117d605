#!/usr/bin/python3
"""Counts, in whole FileDescriptorSets (build/proto/envoy-<version>.pb), the message fields whose
FieldOptions carry extension 1071 (protoc-gen-validate's validate.rules) and the oneofs whose
OneofOptions carry it (validate.required): the expected counts of tests/proto/test_schema_rules.c,
read with a wire-format reader of its own rather than with upb or the code under test.

    /usr/bin/python3 tests/proto/count_pgv.py build/proto/envoy-*.pb
"""
import sys


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    i = 0
    while i < len(b):
        t, i = varint(b, i)
        w, n = t & 7, t >> 3
        if w == 0:
            v, i = varint(b, i)
            yield n, v
        elif w == 1:
            yield n, b[i:i + 8]
            i += 8
        elif w == 5:
            yield n, b[i:i + 4]
            i += 4
        elif w == 2:
            m, i = varint(b, i)
            yield n, b[i:i + m]
            i += m
        else:
            raise ValueError("wire type %d" % w)


def has_1071(options):
    return any(n == 1071 for n, _ in fields(options))


def message(b, counts):
    for n, v in fields(b):
        if n == 2:  # DescriptorProto.field
            counts[0] += any(fn == 8 and has_1071(fv) for fn, fv in fields(v))
        elif n == 3:  # nested_type
            message(v, counts)
        elif n == 8:  # oneof_decl
            counts[1] += any(on == 2 and has_1071(ov) for on, ov in fields(v))


for path in sys.argv[1:]:
    counts = [0, 0]
    with open(path, "rb") as f:
        data = f.read()
    for _, file in fields(data):
        for fn, fv in fields(file):
            if fn == 4:  # FileDescriptorProto.message_type
                message(fv, counts)
    print("%s: %d fields with rules, %d required oneofs" % (path, counts[0], counts[1]))
