// Command gendocs writes docs/commands.md from the shell's command table.
// It is run by go generate ./shell.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"

	"github.com/vsh-rdma/vsh/shell"
)

func main() {
	out := flag.String("o", "", "the file to write (stdout when empty)")
	flag.Parse()
	var b bytes.Buffer
	if err := shell.WriteMarkdown(&b); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
	if *out == "" {
		os.Stdout.Write(b.Bytes())
		return
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
