package main

import (
	"os"

	"github.com/vsh-rdma/vsh/internal/lab"
)

func main() {
	os.Exit(lab.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
