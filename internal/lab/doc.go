// Package lab is the soft-RoCE lab behind cmd/rxe-lab: it boots Debian's
// kernel, which has rdma_rxe, in a throw-away QEMU guest that shares the
// host's filesystem read-only, creates rxe0 there, and runs one command inside.
//
// The host kernel may have no RDMA support at all. The guest's userspace is
// the host's own root filesystem over virtio-9p, so every host binary and
// library (rdma-core, ibverbs-utils, a cgo program built on the host, bash)
// is there at the same path; only the kernel and a tiny initramfs (static
// busybox, the modules rxe needs, and an /init) come from the lab's cache.
//
// # Setup
//
// [Setup] installs the host packages with apt-get, downloads the kernel
// package with apt-get download and unpacks it with dpkg-deb (it is never
// installed, so no boot hooks run on the host), copies the kernel and the
// modules rdma_rxe, virtio-9p, virtio-serial and the peer wire (veth) need
// into the cache directory, and builds the initramfs. Every step is skipped when its result is already
// in the cache.
//
// # Running a command
//
// [Lab.Run] writes a per-run script (the second stage of the guest's init)
// into a private run directory, starts QEMU in its own process group, and
// talks to the guest over virtio-serial ports connected to Unix sockets:
//
//	vsh.ctl   control: "up", "ready", "fail MSG", "exit N" from the guest;
//	          "winsize ROWS COLS" to the guest
//	vsh.out   the command's standard output
//	vsh.err   the command's standard error
//	vsh.in    its standard input (only when asked for)
//	vsh.tty   a virtio console (hvc0): the command's terminal, for shells
//
// The guest mounts the host root read-only, its own tmpfs on /tmp and /run,
// and then the working directory (and any other shared directory) read-write
// at the same path, so a checkout under /tmp works too. It brings up lo,
// a dummy netdev rxenet0 with 192.0.2.1/24 and rxe0 on it (GID index 1 is
// the IPv4-mapped GID ::ffff:192.0.2.1), runs the command, reports its exit
// status on vsh.ctl and powers off. QEMU's own exit status says nothing about
// the command; the status on vsh.ctl is the one [Lab.Run] returns.
//
// A peer run ([RunSpec].Peer, rxe-lab run --peer) adds a second wire, for
// vsh's simulated RNIC: a veth pair from the root network namespace, where
// [KernelVeth] has 198.51.100.1/24 and 2001:db8:4791::1/64 and carries a
// second soft-RoCE device, [PeerDevice] (rxe1), to the namespace [PeerNetNS]
// (vshpeer), where [PeerVeth] has 198.51.100.2/24 and 2001:db8:4791::2/64
// and UDP port 4791 is free (kernel rxe holds it in the root namespace).
// The command runs in that namespace (ip netns exec). Stage 2 waits until
// rxe1's port is ACTIVE and both of its addresses are in its GID table; their
// indexes are the kernel's choice, so programs look them up by value in
// /sys/class/infiniband/rxe1/ports/1/gids/*. Other runs have rxe0 only, so
// that a program's first two devices (vsh's A and B) are still rxe0.
//
// QEMU is always stopped: at the command's end, at a timeout, on
// cancellation, and (Linux) when this process dies, through the parent-death
// signal. The guest has no network device: the addresses above exist only
// inside it.
//
// # Accelerator
//
// KVM is tried first only where a hardware KVM module (kvm_intel, kvm_amd)
// is loaded and /dev/kvm can be opened; a KVM guest that does not reach its
// init within the fallback time is stopped and TCG is used. Some machines
// have a /dev/kvm backed by a software hypervisor (kvm_pvm) on which a stock
// kernel never boots; they use TCG, which boots the guest in a few seconds.
package lab
