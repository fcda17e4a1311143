package verbstest

import "github.com/vsh-rdma/vsh/verbs"

const (
	srcCheckAccess = "include/rdma/ib_verbs.h ib_check_mr_access (called by uverbs_cmd.c ib_uverbs_reg_mr): remote write or remote atomic without local write is -EINVAL; ibv_reg_mr(3)"
	srcMRInit      = "sw/rxe/rxe_mr.c rxe_mr_init (Linux 6.1): lkey = pool index << 8 | random 8-bit key; rkey = lkey if any remote access was asked, else 0"
)

// mrScenarios are this file's scenarios, each Run a named function.
var mrScenarios = []Scenario{
	{
		Name:   "pd/alloc-dealloc",
		Source: "ibv_alloc_pd(3), ibv_dealloc_pd(3)",
		Run:    scPDAllocDealloc,
	},
	{
		Name:   "mr/local-only-has-no-rkey",
		Source: srcMRInit + "; ibv_reg_mr(3)",
		Run:    scMRLocalOnlyHasNoRKey,
	},
	{
		Name:   "mr/remote-access-rkey-equals-lkey",
		Source: srcMRInit,
		Run:    scMRRemoteAccessRKeyEqualsLKey,
	},
	{
		Name:   "mr/keys-unique-index-pattern",
		Source: srcMRInit + "; rxe_param.h RXE_MIN_MR_INDEX 1: the index part is never 0",
		Run:    scMRKeysUniqueIndexPattern,
	},
	{
		Name:   "mr/remote-write-needs-local-write",
		Source: srcCheckAccess,
		Run:    scMRRemoteWriteNeedsLocalWrite,
	},
	{
		Name:   "mr/remote-atomic-needs-local-write",
		Source: srcCheckAccess,
		Run:    scMRRemoteAtomicNeedsLocalWrite,
	},
	{
		Name:   "mr/remote-read-alone-allowed",
		Source: srcCheckAccess + " (remote read is not in the rule)",
		Run:    scMRRemoteReadAloneAllowed,
	},
	{
		Name:   "mr/zero-length",
		Source: "core/umem.c ib_umem_get: npages == 0 is -EINVAL (rxe_reg_user_mr → rxe_mr_init_user → ib_umem_get)",
		Run:    scMRZeroLength,
	},
	{
		Name:   "mr/negative-length",
		Source: "issue 2 Done-when: no input to any verbs method panics; a length that size_t cannot hold is refused",
		Run:    scMRNegativeLength,
	},
	{
		Name:   "mr/on-demand-unsupported",
		Source: "include/rdma/ib_verbs.h ib_check_mr_access (6.1): IB_ACCESS_ON_DEMAND without IBK_ON_DEMAND_PAGING is -EINVAL; rxe 6.1 sets only IBK_ALLOW_USER_UNREG (rxe.c). Newer kernels give rxe ODP",
		Run:    scMROnDemandUnsupported,
	},
	{
		Name:   "mr/undefined-access-bit",
		Source: "include/rdma/ib_verbs.h ib_check_mr_access: flags outside IB_ACCESS_SUPPORTED (bits 0..7 and the optional range 20..29) are -EINVAL",
		Run:    scMRUndefinedAccessBit,
	},
	{
		Name:   "mr/relaxed-ordering-accepted",
		Source: "IBV_ACCESS_RELAXED_ORDERING is in IB_ACCESS_OPTIONAL (ib_verbs.h), which ib_check_mr_access allows and rxe ignores; ibv_reg_mr(3): optional flags may be ignored",
		Run:    scMRRelaxedOrderingAccepted,
	},
	{
		Name:   "mr/memory-view",
		Source: "DESIGN.md \"The verbs API\": registered memory belongs to the backend and is handed out as a byte view; ibv_reg_mr(3) addr/length",
		Run:    scMRMemoryView,
	},
	{
		Name:   "mr/dereg-while-referenced",
		Source: "sw/rxe/rxe_mr.c rxe_dereg_mr (6.1): refused (-EINVAL) only while memory windows are bound (IBA 10.6.7.2.6); posted WRs that name its lkey do not hold it — they fail when they run",
		Run:    scMRDeregWhileReferenced,
	},
	{
		Name:   "mr/dereg-twice",
		Source: "ibv_dereg_mr(3); DESIGN.md: double destroy is a clear error, never a crash",
		Run:    scMRDeregTwice,
	},
}

func init() {
	registerAll(mrScenarios)
}

// scPDAllocDealloc runs the scenario pd/alloc-dealloc.
func scPDAllocDealloc(e *Env) {
	a, err := e.Ctx.AllocPD()
	e.Must(err, "ibv_alloc_pd")
	b, err := e.Ctx.AllocPD()
	e.Must(err, "second ibv_alloc_pd")
	if a == b {
		e.Errorf("two ibv_alloc_pd calls returned the same PD")
	}
	if a.Context() == nil {
		e.Errorf("PD.Context() = nil")
	}
	e.Must(a.Dealloc(), "ibv_dealloc_pd")
	e.Must(b.Dealloc(), "ibv_dealloc_pd")
}

// scMRLocalOnlyHasNoRKey runs the scenario mr/local-only-has-no-rkey.
func scMRLocalOnlyHasNoRKey(e *Env) {
	for _, acc := range []verbs.Access{0, verbs.AccessLocalWrite} {
		mr := e.MR(e.PD(), 4096, acc)
		if mr.LKey() == 0 {
			e.Errorf("reg_mr(%v): lkey = 0; want a key (index << 8 | key)", acc)
		}
		if mr.RKey() != 0 {
			e.Errorf("reg_mr(%v): rkey = %#x; want 0 (no remote access asked)", acc, mr.RKey())
		}
	}
}

// scMRRemoteAccessRKeyEqualsLKey runs the scenario mr/remote-access-rkey-equals-lkey.
func scMRRemoteAccessRKeyEqualsLKey(e *Env) {
	for _, acc := range []verbs.Access{
		verbs.AccessRemoteRead,
		verbs.AccessLocalWrite | verbs.AccessRemoteWrite,
		verbs.AccessLocalWrite | verbs.AccessRemoteAtomic,
		verbs.AccessLocalWrite | verbs.AccessRemoteWrite | verbs.AccessRemoteRead | verbs.AccessRemoteAtomic,
	} {
		mr := e.MR(e.PD(), 4096, acc)
		if mr.RKey() != mr.LKey() || mr.RKey() == 0 {
			e.Errorf("reg_mr(%v): lkey %#x rkey %#x; want rkey == lkey != 0", acc, mr.LKey(), mr.RKey())
		}
	}
}

// scMRKeysUniqueIndexPattern runs the scenario mr/keys-unique-index-pattern.
func scMRKeysUniqueIndexPattern(e *Env) {
	seen := map[uint32]bool{}
	idx := map[uint32]bool{}
	for i := 0; i < 8; i++ {
		mr := e.MR(e.PD(), 4096, verbs.AccessLocalWrite)
		k := mr.LKey()
		if seen[k] {
			e.Errorf("lkey %#x handed out twice", k)
		}
		seen[k] = true
		if k>>8 == 0 {
			e.Errorf("lkey %#x has index 0; rxe MR indices start at 1", k)
		}
		if idx[k>>8] {
			e.Errorf("lkey %#x reuses index %#x of a live MR", k, k>>8)
		}
		idx[k>>8] = true
	}
}

// scMRRemoteWriteNeedsLocalWrite runs the scenario mr/remote-write-needs-local-write.
func scMRRemoteWriteNeedsLocalWrite(e *Env) {
	_, err := e.PD().AllocMR(4096, verbs.AccessRemoteWrite)
	e.ExpectErrno(err, verbs.EINVAL, "ibv_reg_mr(IBV_ACCESS_REMOTE_WRITE)")
	_, err = e.PD().AllocMR(4096, verbs.AccessRemoteWrite|verbs.AccessRemoteRead)
	e.ExpectErrno(err, verbs.EINVAL, "ibv_reg_mr(REMOTE_WRITE|REMOTE_READ)")
}

// scMRRemoteAtomicNeedsLocalWrite runs the scenario mr/remote-atomic-needs-local-write.
func scMRRemoteAtomicNeedsLocalWrite(e *Env) {
	_, err := e.PD().AllocMR(4096, verbs.AccessRemoteAtomic)
	e.ExpectErrno(err, verbs.EINVAL, "ibv_reg_mr(IBV_ACCESS_REMOTE_ATOMIC)")
}

// scMRRemoteReadAloneAllowed runs the scenario mr/remote-read-alone-allowed.
func scMRRemoteReadAloneAllowed(e *Env) {
	mr := e.MR(e.PD(), 4096, verbs.AccessRemoteRead)
	if mr.Access() != verbs.AccessRemoteRead {
		e.Errorf("MR.Access() = %v; want %v", mr.Access(), verbs.AccessRemoteRead)
	}
}

// scMRZeroLength runs the scenario mr/zero-length.
func scMRZeroLength(e *Env) {
	_, err := e.PD().AllocMR(0, verbs.AccessLocalWrite)
	e.ExpectErrno(err, verbs.EINVAL, "ibv_reg_mr(length 0)")
}

// scMRNegativeLength runs the scenario mr/negative-length.
func scMRNegativeLength(e *Env) {
	e.NoPanic("AllocMR(-1)", func() {
		_, err := e.PD().AllocMR(-1, verbs.AccessLocalWrite)
		e.ExpectError(err, "AllocMR(-1)")
	})
}

// scMROnDemandUnsupported runs the scenario mr/on-demand-unsupported.
func scMROnDemandUnsupported(e *Env) {
	_, err := e.PD().AllocMR(4096, verbs.AccessLocalWrite|verbs.AccessOnDemand)
	e.ExpectErrno(err, verbs.EINVAL, "ibv_reg_mr(LOCAL_WRITE|ON_DEMAND)")
}

// scMRUndefinedAccessBit runs the scenario mr/undefined-access-bit.
func scMRUndefinedAccessBit(e *Env) {
	_, err := e.PD().AllocMR(4096, verbs.AccessLocalWrite|verbs.Access(1<<10))
	e.ExpectErrno(err, verbs.EINVAL, "ibv_reg_mr(LOCAL_WRITE|1<<10)")
}

// scMRRelaxedOrderingAccepted runs the scenario mr/relaxed-ordering-accepted.
func scMRRelaxedOrderingAccepted(e *Env) {
	mr, err := e.PD().AllocMR(4096, verbs.AccessLocalWrite|verbs.AccessRelaxedOrdering)
	if err != nil {
		e.Errorf("ibv_reg_mr(LOCAL_WRITE|RELAXED_ORDERING) = %v; want success", err)
		return
	}
	e.Defer(func() { _ = mr.Dereg() })
}

// scMRMemoryView runs the scenario mr/memory-view.
func scMRMemoryView(e *Env) {
	mr := e.MR(e.PD(), 8192, verbs.AccessLocalWrite)
	b := mr.Bytes()
	if len(b) != 8192 || mr.Length() != 8192 {
		e.Fatalf("len(Bytes()) = %d, Length() = %d; want 8192", len(b), mr.Length())
	}
	for i, v := range b {
		if v != 0 {
			e.Errorf("Bytes()[%d] = %#x; want zeroed memory", i, v)
			break
		}
	}
	b[0], b[8191] = 0x7b, 0x7b
	if c := mr.Bytes(); c[0] != 0x7b || c[8191] != 0x7b {
		e.Errorf("writes through Bytes() are not visible through a second Bytes()")
	}
	if mr.Addr() == 0 {
		e.Errorf("Addr() = 0")
	}
	if mr.PD() != e.PD() {
		e.Errorf("MR.PD() is not the PD it was registered on")
	}
}

// scMRDeregWhileReferenced runs the scenario mr/dereg-while-referenced.
func scMRDeregWhileReferenced(e *Env) {
	mr, err := e.PD().AllocMR(4096, verbs.AccessLocalWrite)
	e.Must(err, "ibv_reg_mr")
	q := e.QP(verbs.QPTypeRC)
	e.Bring(q, q.Num(), verbs.QPSInit)
	_, err = q.PostRecv([]verbs.RecvWR{{WRID: 1, SGList: []verbs.SGE{{Addr: mr.Addr(), Length: 64, LKey: mr.LKey()}}}})
	e.Must(err, "ibv_post_recv into the MR")
	if err := mr.Dereg(); err != nil {
		e.Errorf("ibv_dereg_mr of an MR a posted receive names = %v; want success", err)
	}
}

// scMRDeregTwice runs the scenario mr/dereg-twice.
func scMRDeregTwice(e *Env) {
	mr, err := e.PD().AllocMR(4096, verbs.AccessLocalWrite)
	e.Must(err, "ibv_reg_mr")
	e.Must(mr.Dereg(), "ibv_dereg_mr")
	e.NoPanic("second ibv_dereg_mr", func() { e.ExpectError(mr.Dereg(), "second ibv_dereg_mr") })
}
