//go:build !linux

package lab

import (
	"os/exec"
	"syscall"
)

func qemuProcAttr() *syscall.SysProcAttr { return nil }

func killQemu(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
