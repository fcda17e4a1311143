package kernel_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/vsh-rdma/vsh/shell/kernel"
)

// A connection file is what Jupyter writes for each kernel it starts.
func ExampleReadConnectionFile() {
	dir, _ := os.MkdirTemp("", "conn")
	defer os.RemoveAll(dir)
	name := filepath.Join(dir, "kernel-1.json")
	os.WriteFile(name, []byte(`{"shell_port": 50001, "iopub_port": 50002, "stdin_port": 50003, "control_port": 50004,
		"hb_port": 50005, "ip": "127.0.0.1", "key": "secret", "transport": "tcp", "signature_scheme": "hmac-sha256"}`), 0o600)
	ci, err := kernel.ReadConnectionFile(name)
	fmt.Println(ci.IP, ci.ShellPort, ci.HBPort, err)
	// Output: 127.0.0.1 50001 50005 <nil>
}
