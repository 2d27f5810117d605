// Oracle go-fmt: Go's own fmt and strings, as mapstructure (through Consul) uses them.
//
//	gofmt gen SEED N   N float64 bit patterns (hex, one a line) drawn from SEED: random bits,
//	                   integers, short decimals scaled by powers of ten, powers of two and
//	                   their neighbours, and the 'g' form's edges (1e-05, 1e-04, 1e+05, 1e+06)
//	gofmt v            for each hex bit pattern on stdin: "HEX\t" and fmt's %v of that float64
//	gofmt fold         for each UTF-8 key on stdin: the ASCII letters strings.EqualFold says
//	                   each of its runes equals ("-" for none), e.g. "Patche\u017f" -> "P a t c h e s"
package main

import (
	"bufio"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strconv"
	"strings"
)

func gen(seed int64, n int) {
	r := rand.New(rand.NewSource(seed))
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	edges := []float64{1e-5, 1e-4, 1e5, 1e6, 1e21, 1e20, 0.1, 0.5}
	for i := 0; i < n; i++ {
		var f float64
		switch i % 6 {
		case 0:
			f = math.Float64frombits(r.Uint64())
		case 1:
			f = float64(r.Int63n(1<<53)) * math.Pow(10, float64(r.Intn(30)))
		case 2:
			f = float64(r.Intn(100000)) * math.Pow(10, float64(r.Intn(40)-20))
		case 3:
			f = math.Ldexp(1, r.Intn(2098)-1074)
			for k := r.Intn(3) - 1; k != 0; k -= k / abs(k) {
				f = math.Nextafter(f, math.Inf(k))
			}
		case 4:
			e := edges[r.Intn(len(edges))]
			f = math.Float64frombits(math.Float64bits(e) + uint64(r.Intn(5)) - 2)
		default:
			f = float64(r.Int63n(10000000)) / math.Pow(10, float64(r.Intn(12)))
		}
		if r.Intn(2) == 0 {
			f = -f
		}
		if math.IsNaN(f) {
			continue
		}
		fmt.Fprintf(w, "%016x\n", math.Float64bits(f))
	}
}

func abs(k int) int {
	if k < 0 {
		return -k
	}
	return k
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gofmt gen SEED N | gofmt v | gofmt fold")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "gen":
		seed, _ := strconv.ParseInt(os.Args[2], 10, 64)
		n, _ := strconv.Atoi(os.Args[3])
		gen(seed, n)
		return
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for in.Scan() {
		line := in.Text()
		switch os.Args[1] {
		case "v":
			bits, err := strconv.ParseUint(line, 16, 64)
			if err != nil {
				fmt.Fprintf(os.Stderr, "not a hex bit pattern: %q\n", line)
				os.Exit(2)
			}
			fmt.Fprintf(w, "%s\t%v\n", line, math.Float64frombits(bits))
		case "fold":
			var out []string
			for _, r := range line {
				m := "-"
				for c := 'a'; c <= 'z'; c++ {
					if strings.EqualFold(string(r), string(c)) {
						m = string(c)
					}
				}
				out = append(out, m)
			}
			fmt.Fprintln(w, strings.Join(out, " "))
		}
	}
}
