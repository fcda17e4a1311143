//go:build linux

package lab

import (
	"os/exec"
	"syscall"
)

// qemuProcAttr puts QEMU in its own process group, so that a terminal's
// Ctrl-C never reaches it and the whole group can be killed, and has the
// kernel kill it when this process dies, however it dies.
func qemuProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killQemu kills QEMU's process group.
func killQemu(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Process.Kill()
	}
}
