// Command gencatalog writes docs/lessons.md from the front matter of the
// lessons that ship with vsh and the mutation test's figures
// (testdata/mutants/figures.txt). go generate ./lessons runs it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/vsh-rdma/vsh/lessons"
)

func main() {
	out := flag.String("o", "", "the file to write (default: stdout)")
	figures := flag.String("mutants", "testdata/mutants/figures.txt", "the mutation test's figures")
	flag.Parse()
	f, err := os.Open(*figures)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gencatalog: %v\n", err)
		os.Exit(1)
	}
	mutants, err := lessons.ReadMutants(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "gencatalog: %v\n", err)
		os.Exit(1)
	}
	var b bytes.Buffer
	if err := lessons.WriteCatalog(&b, mutants); err != nil {
		fmt.Fprintf(os.Stderr, "gencatalog: %v\n", err)
		os.Exit(1)
	}
	if *out == "" {
		os.Stdout.Write(b.Bytes())
		return
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "gencatalog: %v\n", err)
		os.Exit(1)
	}
}
