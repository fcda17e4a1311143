package lab

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestChooseAccel(t *testing.T) {
	tests := []struct {
		name    string
		spec    string
		probe   hostProbe
		want    []string
		whyHas  string
		wantErr bool
	}{
		{"hardware KVM", "auto", hostProbe{DevKVM: true, DevKVMOpen: true, KVMModules: []string{"kvm", "kvm_intel"}},
			[]string{"kvm", "tcg"}, "kvm_intel", false},
		{"AMD, empty spec means auto", "", hostProbe{DevKVM: true, DevKVMOpen: true, KVMModules: []string{"kvm", "kvm_amd"}},
			[]string{"kvm", "tcg"}, "kvm_amd", false},
		{"PVM /dev/kvm is not used", "auto", hostProbe{DevKVM: true, DevKVMOpen: true, KVMModules: []string{"kvm", "kvm_pvm"}},
			[]string{"tcg"}, "kvm_pvm", false},
		{"no KVM at all", "auto", hostProbe{}, []string{"tcg"}, "no KVM", false},
		{"KVM without permission", "auto", hostProbe{DevKVM: true, DevKVMError: "permission denied", KVMModules: []string{"kvm_intel"}},
			[]string{"tcg"}, "group kvm", false},
		{"explicit list", "kvm,tcg", hostProbe{}, []string{"kvm", "tcg"}, "--accel kvm,tcg", false},
		{"explicit tcg on a KVM host", "tcg", hostProbe{DevKVM: true, DevKVMOpen: true, KVMModules: []string{"kvm_intel"}},
			[]string{"tcg"}, "--accel tcg", false},
		{"spaces", " kvm , tcg ", hostProbe{}, []string{"kvm", "tcg"}, "", false},
		{"unknown", "hvf", hostProbe{}, nil, "", true},
		{"twice", "tcg,tcg", hostProbe{}, nil, "", true},
		{"empty item", "kvm,", hostProbe{}, nil, "", true},
	}
	for _, tt := range tests {
		got, why, err := chooseAccel(tt.spec, tt.probe)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: error %v, want error %v", tt.name, err, tt.wantErr)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) || !strings.Contains(why, tt.whyHas) {
			t.Errorf("%s: chooseAccel(%q) = %v, %q; want %v and a reason mentioning %q", tt.name, tt.spec, got, why, tt.want, tt.whyHas)
		}
	}
}

func TestQemuArgs(t *testing.T) {
	c := qemuConfig{Accel: AccelTCG, MemoryMiB: 1024, CPUs: 2, Kernel: "/c/vmlinuz", Initrd: "/c/i.img",
		Append: kernelAppend(false), Name: "rxe-lab-1", SockDir: "/tmp/r,un", RunDir: "/tmp/r,un",
		Channels: []string{"vsh.ctl", "vsh.tty"},
		Shares:   []Share{{Path: "/work/a,b"}, {Path: "/tmp/bin", ReadOnly: true}}}
	args := qemuArgs(c)
	joined := strings.Join(args, " ")
	for _, want := range []string{
		"-nodefaults", "-nic none", "-display none", "-no-reboot",
		"-accel tcg,thread=multi -cpu max", "-m 1024", "-smp 2",
		"-kernel /c/vmlinuz -initrd /c/i.img",
		"-chardev socket,id=console,path=/tmp/r,,un/console.sock -serial chardev:console",
		"-chardev socket,id=ch0,path=/tmp/r,,un/vsh.ctl.sock -device virtserialport,bus=vser.0,chardev=ch0,name=vsh.ctl",
		"-device virtconsole,bus=vser.0,chardev=ch1,name=vsh.tty",
		"-fsdev local,id=hostroot,path=/,security_model=none,multidevs=remap,readonly=on",
		"-fsdev local,id=vshrun,path=/tmp/r,,un,security_model=none,multidevs=remap,readonly=on",
		"-fsdev local,id=share0,path=/work/a,,b,security_model=none,multidevs=remap -device virtio-9p-pci,fsdev=share0,mount_tag=share0",
		"-fsdev local,id=share1,path=/tmp/bin,security_model=none,multidevs=remap,readonly=on",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("QEMU arguments lack %q:\n%s", want, joined)
		}
	}
	// The guest must have no network device: nothing but -nic none.
	for _, a := range args {
		if strings.Contains(a, "netdev") || strings.Contains(a, "user,") || strings.HasPrefix(a, "virtio-net") {
			t.Errorf("QEMU arguments give the guest a network: %q", a)
		}
	}
	kvm := qemuArgs(qemuConfig{Accel: AccelKVM, MemoryMiB: 512, CPUs: 1})
	if !slices.Contains(kvm, "kvm") || !slices.Contains(kvm, "host") {
		t.Errorf("KVM arguments lack -accel kvm -cpu host: %q", kvm)
	}
}

func TestKernelAppend(t *testing.T) {
	if a := kernelAppend(false); !strings.Contains(a, "console=ttyS0") || !strings.Contains(a, "panic=-1") || !strings.Contains(a, "quiet") || !strings.Contains(a, "clocksource=tsc") {
		t.Errorf("kernelAppend(false) = %q", a)
	}
	if a := kernelAppend(true); strings.Contains(a, "quiet") {
		t.Errorf("kernelAppend(true) = %q: verbose boots must not be quiet", a)
	}
}
