// Command gencatalog writes docs/lessons.md from the front matter of the
// lessons that ship with vsh. go generate ./lessons runs it.
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
	flag.Parse()
	var b bytes.Buffer
	if err := lessons.WriteCatalog(&b); err != nil {
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
