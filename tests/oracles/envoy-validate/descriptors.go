// The descriptor mode: Go's own registry of this version's Envoy v3 API, for checking the
// descriptor set our build extracts from the same module version (proto/, issue 24).
//
//	envoy-validate-vX -descriptor-set > FILE    every envoy/**/v3/*.proto file the linked
//	                                            packages register, and every file they import,
//	                                            imports first, as a binary FileDescriptorSet
//	envoy-validate-vX -compare-descriptors FILE compares FILE (a FileDescriptorSet) with that set,
//	                                            file by file; exit 0 when they are the same
//
// Go's side is protodesc.ToFileDescriptorProto of each registered file, marshalled
// deterministically. The comparison says every file only one side has, every file whose bytes
// differ, and for those the fields that differ as paths from the file (or "same message, other
// bytes" when only the encoding differs).
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// isEnvoyV3 is the snapshot's file selection: envoy/**/v3/*.proto.
func isEnvoyV3(path string) bool {
	return strings.HasPrefix(path, "envoy/") && strings.Contains(path, "/v3/") &&
		!strings.Contains(path[strings.Index(path, "/v3/")+4:], "/")
}

// registrySet gives the selected files and their imports, imports first (a depth-first walk
// from the roots in name order), each as Go's FileDescriptorProto bytes.
func registrySet() (names []string, raw map[string][]byte, err error) {
	var roots []protoreflect.FileDescriptor
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if isEnvoyV3(fd.Path()) {
			roots = append(roots, fd)
		}
		return true
	})
	sort.Slice(roots, func(i, j int) bool { return roots[i].Path() < roots[j].Path() })
	raw = map[string][]byte{}
	opts := proto.MarshalOptions{Deterministic: true}
	var visit func(fd protoreflect.FileDescriptor) error
	visit = func(fd protoreflect.FileDescriptor) error {
		if _, done := raw[fd.Path()]; done {
			return nil
		}
		raw[fd.Path()] = nil // visiting: an import cycle (protoc refuses them) cannot loop
		imps := fd.Imports()
		for i := 0; i < imps.Len(); i++ {
			if imps.Get(i).IsPlaceholder() {
				return fmt.Errorf("%s imports %s, which no linked package registers", fd.Path(), imps.Get(i).Path())
			}
			if err := visit(imps.Get(i).FileDescriptor); err != nil {
				return err
			}
		}
		b, err := opts.Marshal(protodesc.ToFileDescriptorProto(fd))
		if err != nil {
			return fmt.Errorf("%s: %v", fd.Path(), err)
		}
		raw[fd.Path()] = b
		names = append(names, fd.Path())
		return nil
	}
	for _, fd := range roots {
		if err := visit(fd); err != nil {
			return nil, nil, err
		}
	}
	return names, raw, nil
}

// writeDescriptorSet prints the set as a FileDescriptorSet (field 1, each file's bytes as Go
// marshalled them, so -compare-descriptors reads back exactly what was printed).
func writeDescriptorSet(w io.Writer) error {
	names, raw, err := registrySet()
	if err != nil {
		return err
	}
	var out []byte
	for _, n := range names {
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, raw[n])
	}
	_, err = w.Write(out)
	return err
}

// readSetFiles splits a FileDescriptorSet into its files' own bytes, by name, without
// re-encoding them (a byte comparison must see the bytes as written).
func readSetFiles(b []byte) (names []string, files map[string][]byte, err error) {
	files = map[string][]byte{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, nil, protowire.ParseError(n)
		}
		b = b[n:]
		if num != 1 || typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return nil, nil, protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, nil, protowire.ParseError(n)
		}
		b = b[n:]
		var fdp descriptorpb.FileDescriptorProto
		if err := proto.Unmarshal(v, &fdp); err != nil {
			return nil, nil, fmt.Errorf("file %d of the set: %v", len(names)+1, err)
		}
		name := fdp.GetName()
		if _, dup := files[name]; dup {
			return nil, nil, fmt.Errorf("%s is in the set twice", name)
		}
		files[name] = v
		names = append(names, name)
	}
	return names, files, nil
}

// compareDescriptors writes the differences between the set in path and Go's registry; it
// returns how many files differ (or are on one side only).
func compareDescriptors(path string, w io.Writer) (int, error) {
	theirs, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	tnames, tfiles, err := readSetFiles(theirs)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", path, err)
	}
	gnames, gfiles, err := registrySet()
	if err != nil {
		return 0, err
	}
	bad, same := 0, 0
	for _, n := range gnames {
		if _, ok := tfiles[n]; !ok {
			fmt.Fprintf(w, "only in Go's registry: %s\n", n)
			bad++
		}
	}
	for _, n := range tnames {
		g, ok := gfiles[n]
		if !ok {
			fmt.Fprintf(w, "only in %s: %s\n", path, n)
			bad++
			continue
		}
		if bytes.Equal(g, tfiles[n]) {
			same++
			continue
		}
		bad++
		fmt.Fprintf(w, "%s: bytes differ (%d in Go's registry, %d in the set)\n", n, len(g), len(tfiles[n]))
		for _, d := range describeDiff(g, tfiles[n]) {
			fmt.Fprintf(w, "  %s\n", d)
		}
	}
	fmt.Fprintf(w, "%d files in Go's registry, %d in %s: %d byte-equal, %d differ or are on one side only\n",
		len(gnames), len(tnames), path, same, bad)
	return bad, nil
}

// describeDiff says where two encodings of one file differ: the fields of the decoded messages
// (at most 20), or, when they decode equal, where the bytes part.
func describeDiff(g, t []byte) []string {
	var gm, tm descriptorpb.FileDescriptorProto
	uo := proto.UnmarshalOptions{Resolver: protoregistry.GlobalTypes} // options' extensions decoded
	if err := uo.Unmarshal(g, &gm); err != nil {
		return []string{"Go's bytes do not decode: " + err.Error()}
	}
	if err := uo.Unmarshal(t, &tm); err != nil {
		return []string{"the set's bytes do not decode: " + err.Error()}
	}
	var out []string
	diffMessage(gm.ProtoReflect(), tm.ProtoReflect(), "", &out)
	if len(out) == 0 {
		i := 0
		for i < len(g) && i < len(t) && g[i] == t[i] {
			i++
		}
		out = append(out, fmt.Sprintf("same message, other bytes: they part at byte %d (field order or encoding)", i))
	}
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("... and %d more", len(out)-20))
	}
	return out
}

// diffMessage appends "path: Go's value | the set's value" for each field that differs, going
// into messages and lists item by item (a list of another length is one difference).
func diffMessage(a, b protoreflect.Message, path string, out *[]string) {
	seen := map[protoreflect.FieldNumber]bool{}
	fields := func(m protoreflect.Message) {
		m.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
			if seen[fd.Number()] {
				return true
			}
			seen[fd.Number()] = true
			diffField(a, b, fd, path, out)
			return true
		})
	}
	fields(a)
	fields(b)
	if !bytes.Equal(a.GetUnknown(), b.GetUnknown()) {
		*out = append(*out, fmt.Sprintf("%s: unknown fields %x | %x", orRoot(path), a.GetUnknown(), b.GetUnknown()))
	}
}

func diffField(a, b protoreflect.Message, fd protoreflect.FieldDescriptor, path string, out *[]string) {
	name := string(fd.Name())
	if fd.IsExtension() {
		name = "(" + string(fd.FullName()) + ")"
	}
	p := path + "/" + name
	if a.Has(fd) != b.Has(fd) {
		*out = append(*out, fmt.Sprintf("%s: %s | %s", p, show(a, fd), show(b, fd)))
		return
	}
	switch {
	case fd.IsList() && fd.Message() != nil && fd.Message().Fields().ByName("name") != nil:
		diffNamedList(a.Get(fd).List(), b.Get(fd).List(), p, out)
	case fd.IsList():
		la, lb := a.Get(fd).List(), b.Get(fd).List()
		if la.Len() != lb.Len() {
			*out = append(*out, fmt.Sprintf("%s: %d items | %d items", p, la.Len(), lb.Len()))
			return
		}
		for i := 0; i < la.Len(); i++ {
			ip := fmt.Sprintf("%s/%d", p, i)
			if fd.Message() != nil {
				diffMessage(la.Get(i).Message(), lb.Get(i).Message(), itemPath(ip, la.Get(i).Message()), out)
			} else if !la.Get(i).Equal(lb.Get(i)) {
				*out = append(*out, fmt.Sprintf("%s: %v | %v", ip, la.Get(i), lb.Get(i)))
			}
		}
	case fd.IsMap():
		if !a.Get(fd).Equal(b.Get(fd)) {
			*out = append(*out, fmt.Sprintf("%s: the maps differ", p))
		}
	case fd.Message() != nil:
		diffMessage(a.Get(fd).Message(), b.Get(fd).Message(), p, out)
	default:
		if !a.Get(fd).Equal(b.Get(fd)) {
			*out = append(*out, fmt.Sprintf("%s: %v | %v", p, a.Get(fd), b.Get(fd)))
		}
	}
}

// diffNamedList compares lists of named messages (messages, fields, enum values, ...) by name:
// each name only one side has, then each name both have item by item, then their order.
func diffNamedList(la, lb protoreflect.List, p string, out *[]string) {
	name := func(m protoreflect.Message) string {
		return m.Get(m.Descriptor().Fields().ByName("name")).String()
	}
	index := func(l protoreflect.List) (map[string]int, []string) {
		at, order := map[string]int{}, []string{}
		for i := 0; i < l.Len(); i++ {
			n := name(l.Get(i).Message())
			at[n] = i
			order = append(order, n)
		}
		return at, order
	}
	ia, oa := index(la)
	ib, ob := index(lb)
	for _, n := range oa {
		if _, ok := ib[n]; !ok {
			*out = append(*out, fmt.Sprintf("%s(%s): only in Go's registry", p, n))
		}
	}
	for _, n := range ob {
		if _, ok := ia[n]; !ok {
			*out = append(*out, fmt.Sprintf("%s(%s): only in the set", p, n))
		}
	}
	for _, n := range oa {
		if j, ok := ib[n]; ok {
			diffMessage(la.Get(ia[n]).Message(), lb.Get(j).Message(), fmt.Sprintf("%s/%d(%s)", p, ia[n], n), out)
		}
	}
	if len(*out) == 0 && strings.Join(oa, ",") != strings.Join(ob, ",") {
		*out = append(*out, fmt.Sprintf("%s: the same items in another order", p))
	}
}

// itemPath names a list item by its name field, when it has one (a message, a field), so a
// difference reads as /message_type/3(Cluster)/field/7(dns_jitter).
func itemPath(p string, m protoreflect.Message) string {
	if fd := m.Descriptor().Fields().ByName("name"); fd != nil && m.Has(fd) {
		return fmt.Sprintf("%s(%s)", p, m.Get(fd).String())
	}
	return p
}

func show(m protoreflect.Message, fd protoreflect.FieldDescriptor) string {
	if !m.Has(fd) {
		return "unset"
	}
	if fd.Message() != nil && !fd.IsList() && !fd.IsMap() {
		return "set"
	}
	return fmt.Sprintf("%v", m.Get(fd))
}

func orRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}
