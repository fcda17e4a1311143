package kernel

import (
	"encoding/json"
	"fmt"
	"os"
)

// ConnectionInfo is a Jupyter connection file: where the kernel listens
// and the key its messages are signed with.
type ConnectionInfo struct {
	Transport       string `json:"transport"`
	IP              string `json:"ip"`
	ShellPort       int    `json:"shell_port"`
	IOPubPort       int    `json:"iopub_port"`
	StdinPort       int    `json:"stdin_port"`
	ControlPort     int    `json:"control_port"`
	HBPort          int    `json:"hb_port"`
	Key             string `json:"key"`
	SignatureScheme string `json:"signature_scheme"`
	KernelName      string `json:"kernel_name,omitempty"`
}

// ReadConnectionFile reads and checks a connection file.
func ReadConnectionFile(name string) (*ConnectionInfo, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("kernel: the connection file: %v", err)
	}
	var ci ConnectionInfo
	if err := json.Unmarshal(b, &ci); err != nil {
		return nil, fmt.Errorf("kernel: the connection file %s is not JSON: %v", name, err)
	}
	if ci.Transport == "" {
		ci.Transport = "tcp"
	}
	if ci.Transport != "tcp" {
		return nil, fmt.Errorf("kernel: the connection file %s asks for transport %q; vsh's kernel speaks tcp", name, ci.Transport)
	}
	if ci.SignatureScheme != "" && ci.SignatureScheme != "hmac-sha256" {
		return nil, fmt.Errorf("kernel: the connection file %s asks for signature scheme %q; vsh's kernel signs with hmac-sha256", name, ci.SignatureScheme)
	}
	for _, p := range []int{ci.ShellPort, ci.IOPubPort, ci.StdinPort, ci.ControlPort, ci.HBPort} {
		if p <= 0 || p > 65535 {
			return nil, fmt.Errorf("kernel: the connection file %s has a bad port %d", name, p)
		}
	}
	if ci.IP == "" {
		ci.IP = "127.0.0.1"
	}
	return &ci, nil
}

// endpoint is the ZeroMQ address of port.
func (ci *ConnectionInfo) endpoint(port int) string {
	return fmt.Sprintf("%s://%s:%d", ci.Transport, ci.IP, port)
}
