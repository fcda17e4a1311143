//go:build linux && cgo && ibverbs

package main

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
)

// object is what a handle names: one verbs object and the C struct the
// program holds for it.
type object struct {
	h    C.uintptr_t    // its handle
	v    any            // the verbs object (nil once released)
	kind string         // "ctx", "pd", "mr", "cq", "channel", "qp", "srq", "ah", "xrcd"
	name string         // as the trace names it: qp0, cq1 ...
	ctx  *ctxObj        // the context it belongs to (nil for a context)
	c    unsafe.Pointer // the C struct (calloc'd; freed when its context closes)
	dead bool           // destroyed: the struct stays, calls through it are refused
}

func (o *object) base() *object { return o }

type handled interface{ base() *object }

// state is the library's one instance: the simulator and the handle table.
var state struct {
	once    sync.Once
	initErr error
	fab     *sim.Fabric
	devs    []verbs.Device
	cdevs   []*C.struct_vsh_device
	guids   []uint64

	mu    sync.RWMutex
	objs  []handled              // handle h is objs[h-1]
	count map[string]int         // per kind: the next trace number
	byV   map[any]unsafe.Pointer // verbs object → the program's struct (async events)
}

// start builds the simulator once: sim0 on the UDP link at $VSH_SIM_ADDR.
func start() error {
	state.once.Do(func() {
		cfg := sim.Config{Devices: 2, Seed: 1, XRC: os.Getenv("VSH_SIM_XRC") == "1"}
		if s := os.Getenv("VSH_SIM_SEED"); s != "" {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				cfg.Seed = n
			}
		}
		addr := os.Getenv("VSH_SIM_ADDR")
		// What vsh run said is for this process: a child it starts
		// (system("ibv_devinfo")) gets a simulator of its own, on a
		// free address, and no trace over this one's.
		defer func() {
			for _, v := range []string{"VSH_SIM_ADDR", "VSH_SIM_XRC", "VSH_SIM_SEED", "VSH_TRACE"} {
				os.Unsetenv(v)
			}
		}()
		if addr != "" {
			a, err := sim.ParseUDPAddr(addr)
			if err != nil {
				state.initErr = fmt.Errorf("VSH_SIM_ADDR=%s: %w", addr, err)
				return
			}
			addr = a.String()
		}
		f, err := sim.NewUDP(cfg, addr)
		if err != nil {
			state.initErr = err
			return
		}
		f.SetProcessMemory(processMemory)
		f.SetEventNotify(notifyEvent)
		f.SetUDPQuiet(udpQuiet)
		// An empty poll returns at once, as on hardware: a C program's
		// timeout loop ("give up after N polls") must not wait N times
		// the link's idle wait. Programs spin as they would on a NIC.
		f.SetUDPIdleWait(0)
		state.fab = f
		state.devs, state.initErr = f.Devices()
		state.count = map[string]int{}
		state.byV = map[any]unsafe.Pointer{}
		openTrace(f)
	})
	return state.initErr
}

// processMemory is the program's own memory at addr, for inline sends,
// which read it as rdma-core's providers do, at post time. The C side
// (copy_inline) has already copied every inline request's data and
// pointed its SGEs at the copy, so what is read here is always memory it
// owns: a bad address in the program faults there, in C. (A request with
// more inline data than it copies is refused by the simulator before it
// reads: more than any max_inline_data.)
func processMemory(addr uint64, n int) []byte {
	if addr == 0 || n <= 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(nil), uintptr(addr))), n)
}

// add enters o in the table and returns its handle.
func add(o handled, kind string, ctx *ctxObj, c unsafe.Pointer, v any) C.uintptr_t {
	state.mu.Lock()
	defer state.mu.Unlock()
	b := o.base()
	b.kind, b.ctx, b.c = kind, ctx, c
	b.name = kind + strconv.Itoa(state.count[kind])
	state.count[kind]++
	state.objs = append(state.objs, o)
	b.h, b.v = C.uintptr_t(len(state.objs)), v
	if v != nil {
		state.byV[v] = c
	}
	if ctx != nil {
		ctx.owned = append(ctx.owned, o)
	}
	return b.h
}

// lookup returns the object of handle h as a T, or an errno: EINVAL for
// an unknown handle or another kind of object (a bad pointer that still
// reached the library).
func lookup[T handled](h C.uintptr_t) (T, C.int) {
	var zero T
	state.mu.RLock()
	defer state.mu.RUnlock()
	if h == 0 || int(h) > len(state.objs) {
		return zero, C.EINVAL
	}
	o, ok := state.objs[h-1].(T)
	if !ok { // another kind, or freed with its context (nil)
		return zero, C.EINVAL
	}
	return o, 0
}

// cOf returns the program's struct for a verbs object, or nil.
func cOf(v any) unsafe.Pointer {
	if v == nil {
		return nil
	}
	state.mu.RLock()
	defer state.mu.RUnlock()
	return state.byV[v]
}

// errno is err's errno for the program: the verb's, or EINVAL for an error
// that carries none.
func errno(err error) C.int {
	if err == nil {
		return 0
	}
	if e := verbs.ErrnoOf(err); e != 0 {
		return C.int(e)
	}
	return C.int(syscall.EINVAL)
}

// deadErr is what a call through a destroyed object's struct gets.
func deadErr(op string, o *object) error {
	return verbs.Errorf(op, verbs.EINVAL, "do not use an object after its destroy call",
		"%s was destroyed; the program called %s through its stale pointer", o.name, op)
}

func calloc[T any]() *T {
	var z T
	return (*T)(C.calloc(1, C.size_t(unsafe.Sizeof(z))))
}

// ---- devices ----

//export vshDeviceList
func vshDeviceList(n *C.int, out ***C.struct_ibv_device) C.int {
	if err := start(); err != nil {
		fmt.Fprintf(os.Stderr, "libibverbs (vsh): the simulator did not start: %v\n", err)
		return C.int(syscall.ENOSYS)
	}
	state.mu.Lock()
	if state.cdevs == nil {
		for i, d := range state.devs {
			cd := calloc[C.struct_vsh_device]()
			cd.h = C.uintptr_t(i + 1)
			cd.dev.node_type = C.IBV_NODE_CA
			cd.dev.transport_type = C.IBV_TRANSPORT_IB
			setCString(cd.dev.name[:], d.Name())
			setCString(cd.dev.dev_name[:], fmt.Sprintf("uverbs%d", i))
			setCString(cd.dev.dev_path[:], fmt.Sprintf("/sys/class/infiniband_verbs/uverbs%d", i))
			setCString(cd.dev.ibdev_path[:], "/sys/class/infiniband/"+d.Name())
			state.cdevs = append(state.cdevs, cd)
			state.guids = append(state.guids, d.GUID())
		}
	}
	state.mu.Unlock()
	list := (**C.struct_ibv_device)(C.calloc(C.size_t(len(state.cdevs)+1), C.size_t(unsafe.Sizeof(uintptr(0)))))
	s := unsafe.Slice(list, len(state.cdevs)+1)
	for i, cd := range state.cdevs {
		s[i] = &cd.dev
	}
	*n = C.int(len(state.cdevs))
	*out = list
	if tracing() {
		names := make([]string, len(state.devs))
		for i, d := range state.devs {
			names[i] = d.Name()
		}
		traceCall("ibv_get_device_list", ") → "+strings.Join(names, " "), nil)
	}
	return 0
}

func setCString(dst []C.char, s string) {
	n := copy(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), len(dst)-1), s)
	dst[n] = 0
}

//export vshDeviceGUID
func vshDeviceGUID(h C.uintptr_t) C.uint64_t {
	i := int(h) - 1
	if i < 0 || i >= len(state.guids) {
		return 0
	}
	return C.uint64_t(state.guids[i])
}

// udpQuiet is how soon after the program's last verb the simulator's own
// goroutine serves the UDP link: a C program often waits by reading the
// memory a peer writes (ib_write_lat), calling no verb at all.
const udpQuiet = 100 * time.Microsecond
