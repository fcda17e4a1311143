package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Accelerators.
const (
	AccelKVM = "kvm"
	AccelTCG = "tcg"
)

// hostProbe is what the accelerator choice looks at.
type hostProbe struct {
	DevKVM      bool     // /dev/kvm exists
	DevKVMOpen  bool     // and can be opened read-write
	KVMModules  []string // loaded modules named kvm*, e.g. kvm, kvm_intel, kvm_pvm
	DevKVMError string   // why /dev/kvm could not be opened
}

func probeHost() hostProbe {
	var p hostProbe
	if _, err := os.Stat("/dev/kvm"); err == nil {
		p.DevKVM = true
		if f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0); err == nil {
			p.DevKVMOpen = true
			f.Close()
		} else {
			p.DevKVMError = err.Error()
		}
	}
	ents, _ := os.ReadDir("/sys/module")
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "kvm") {
			p.KVMModules = append(p.KVMModules, e.Name())
		}
	}
	return p
}

// chooseAccel turns an --accel value into the accelerators to try, in order,
// and says why. "auto" (or "") is kvm,tcg where a hardware KVM module is
// loaded and /dev/kvm opens, else tcg; otherwise the value is a comma-separated
// list of kvm and tcg. Every accelerator but the last falls back to the next
// when its guest does not boot in time.
func chooseAccel(spec string, p hostProbe) ([]string, string, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "auto" {
		hw := ""
		for _, m := range p.KVMModules {
			if m == "kvm_intel" || m == "kvm_amd" {
				hw = m
			}
		}
		switch {
		case hw != "" && p.DevKVMOpen:
			return []string{AccelKVM, AccelTCG}, "hardware KVM (" + hw + ") is loaded; TCG if the KVM guest does not boot", nil
		case hw != "" && p.DevKVM:
			return []string{AccelTCG}, hw + " is loaded but /dev/kvm cannot be opened (" + p.DevKVMError +
				"); add yourself to group kvm to use KVM", nil
		case hw != "":
			return []string{AccelTCG}, hw + " is loaded but there is no /dev/kvm", nil
		case p.DevKVM:
			others := strings.Join(slices.DeleteFunc(slices.Clone(p.KVMModules), func(m string) bool { return m == "kvm" }), ", ")
			if others == "" {
				others = "no vendor module"
			}
			return []string{AccelTCG}, "/dev/kvm is not backed by kvm_intel or kvm_amd (" + others +
				"); a stock kernel does not boot under it", nil
		default:
			return []string{AccelTCG}, "no KVM on this host", nil
		}
	}
	var list []string
	for _, a := range strings.Split(spec, ",") {
		a = strings.TrimSpace(a)
		if a != AccelKVM && a != AccelTCG {
			return nil, "", fmt.Errorf("--accel %q: want auto, kvm, tcg or a list like kvm,tcg", spec)
		}
		if slices.Contains(list, a) {
			return nil, "", fmt.Errorf("--accel %q: %s given twice", spec, a)
		}
		list = append(list, a)
	}
	return list, "--accel " + spec, nil
}

// AccelName is how messages name an accelerator.
func AccelName(a string) string { return strings.ToUpper(a) }

// qemuConfig is everything that goes on QEMU's command line.
type qemuConfig struct {
	Accel     string
	MemoryMiB int
	CPUs      int
	Kernel    string
	Initrd    string
	Append    string
	Name      string
	SockDir   string   // holds a Unix socket per channel, named after it
	Channels  []string // virtio-serial ports (vsh.ctl, vsh.out, ...); "vsh.tty" becomes a virtio console
	RunDir    string   // shared read-only as 9p tag vshrun
	Shares    []Share  // shared as share0, share1, ...
}

// qemuOpt escapes a value for QEMU's comma-separated option syntax.
func qemuOpt(s string) string { return strings.ReplaceAll(s, ",", ",,") }

// sockPath is the Unix socket of a channel ("console" for the serial console).
func sockPath(dir, channel string) string { return filepath.Join(dir, channel+".sock") }

// qemuArgs returns QEMU's arguments (without the program name). The guest
// gets no network device: -nodefaults and -nic none.
func qemuArgs(c qemuConfig) []string {
	a := []string{"-name", c.Name, "-nodefaults", "-no-user-config", "-display", "none", "-nic", "none"}
	switch c.Accel {
	case AccelKVM:
		a = append(a, "-accel", "kvm", "-cpu", "host")
	default:
		a = append(a, "-accel", "tcg,thread=multi", "-cpu", "max")
	}
	a = append(a, "-m", fmt.Sprint(c.MemoryMiB), "-smp", fmt.Sprint(c.CPUs),
		"-kernel", c.Kernel, "-initrd", c.Initrd, "-append", c.Append, "-no-reboot",
		"-chardev", "socket,id=console,path="+qemuOpt(sockPath(c.SockDir, "console")),
		"-serial", "chardev:console",
		"-device", "virtio-serial-pci,id=vser")
	for i, ch := range c.Channels {
		id := fmt.Sprintf("ch%d", i)
		a = append(a, "-chardev", "socket,id="+id+",path="+qemuOpt(sockPath(c.SockDir, ch)))
		dev := "virtserialport"
		if ch == "vsh.tty" {
			dev = "virtconsole"
		}
		a = append(a, "-device", dev+",bus=vser.0,chardev="+id+",name="+ch)
	}
	fs := func(id, path string, ro bool) {
		o := "local,id=" + id + ",path=" + qemuOpt(path) + ",security_model=none,multidevs=remap"
		if ro {
			o += ",readonly=on"
		}
		a = append(a, "-fsdev", o, "-device", "virtio-9p-pci,fsdev="+id+",mount_tag="+id)
	}
	fs("hostroot", "/", true)
	fs("vshrun", c.RunDir, true)
	for i, s := range c.Shares {
		fs(shareTag(i), s.Path, s.ReadOnly)
	}
	return a
}

// kernelAppend is the guest kernel's command line. Under TCG the kernel
// finds the vCPUs' TSCs unsynchronized and falls back to the HPET, where
// every clock read is an emulated MMIO access and a system call (vDSO has
// no HPET mode); tsc=reliable keeps the TSC, which QEMU derives from the
// host's, so that a clock read costs what it does on a learner's machine.
func kernelAppend(verbose bool) string {
	s := "console=ttyS0 panic=-1 rdinit=/init tsc=reliable clocksource=tsc"
	if !verbose {
		s += " quiet loglevel=3"
	}
	return s
}
