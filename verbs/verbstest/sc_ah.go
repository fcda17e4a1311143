package verbstest

import (
	"syscall"

	"github.com/vsh-rdma/vsh/verbs"
)

// eNODATA is Linux's ENODATA (61); verbs reports Linux numbers everywhere.
const eNODATA = syscall.Errno(61)

const srcCheckAH = "core/verbs.c rdma_check_ah_attr (via rdma_fill_sgid_attr in rdma_create_user_ah and _ib_modify_qp): on a RoCE port (ah type RDMA_AH_ATTR_TYPE_ROCE) an address without IB_AH_GRH is -EINVAL; rxe.7: the GRH is mandatory with RoCE"

// sgidErrno is what rdma_get_gid_attr (core/cache.c) returns for an
// sgid_index: -EINVAL beyond the table, -ENODATA for an empty slot.
func sgidErrno(e *Env, idx int) syscall.Errno {
	pa, err := e.Ctx.QueryPort(e.Port)
	e.Must(err, "ibv_query_port")
	if idx >= pa.GIDTblLen {
		return verbs.EINVAL
	}
	return eNODATA
}

// ahScenarios are this file's scenarios, each Run a named function.
var ahScenarios = []Scenario{
	{
		Name:   "ah/create-with-grh",
		Source: "ibv_create_ah(3); ud_pingpong.c creates its AH with is_global=1 on RoCE; rxe_verbs.c rxe_create_ah",
		Run:    scAHCreateWithGRH,
	},
	{
		Name:   "ah/no-grh-on-roce",
		Source: srcCheckAH,
		Run:    scAHNoGRHOnRoCE,
	},
	{
		Name:   "ah/bad-port",
		Source: "core/uverbs_cmd.c ib_uverbs_create_ah: !rdma_is_port_valid(port_num) is -EINVAL",
		Run:    scAHBadPort,
	},
	{
		Name:   "ah/empty-sgid-index",
		Source: "core/cache.c rdma_get_gid_attr via rdma_fill_sgid_attr: an sgid_index inside the table (gid_tbl_len 1024 on rxe) but empty is -ENODATA, beyond the table -EINVAL; rc_pingpong.c: sgid_index 255 when -g is given on one side only",
		Run:    scAHEmptySGIDIndex,
	},
	{
		Name:   "ah/destroy-twice",
		Source: "ibv_destroy_ah(3); DESIGN.md: double destroy is a clear error, never a crash",
		Run:    scAHDestroyTwice,
	},
}

func init() {
	registerAll(ahScenarios)
}

// scAHCreateWithGRH runs the scenario ah/create-with-grh.
func scAHCreateWithGRH(e *Env) {
	av := e.AV()
	av.GRH.HopLimit = 64
	ah := e.AH(e.PD(), av)
	if got := ah.Attr(); got.GRH.DGID != av.GRH.DGID || !got.IsGlobal || got.PortNum != av.PortNum || got.GRH.SGIDIndex != av.GRH.SGIDIndex {
		e.Errorf("AH.Attr() = %+v; want %+v", got, av)
	}
	if ah.PD() != e.PD() {
		e.Errorf("AH.PD() is not the PD it was created on")
	}
}

// scAHNoGRHOnRoCE runs the scenario ah/no-grh-on-roce.
func scAHNoGRHOnRoCE(e *Env) {
	av := e.AV()
	av.IsGlobal = false
	_, err := e.PD().CreateAH(av)
	e.ExpectErrno(err, verbs.EINVAL, "ibv_create_ah(is_global=0) on RoCE")
}

// scAHBadPort runs the scenario ah/bad-port.
func scAHBadPort(e *Env) {
	for _, p := range []uint8{0, 2} {
		av := e.AV()
		av.PortNum = p
		_, err := e.PD().CreateAH(av)
		e.ExpectErrno(err, verbs.EINVAL, "ibv_create_ah(port_num=%d)", p)
	}
}

// scAHEmptySGIDIndex runs the scenario ah/empty-sgid-index.
func scAHEmptySGIDIndex(e *Env) {
	av := e.AV()
	av.GRH.SGIDIndex = 255
	_, err := e.PD().CreateAH(av)
	e.ExpectErrno(err, sgidErrno(e, 255), "ibv_create_ah(sgid_index=255)")
}

// scAHDestroyTwice runs the scenario ah/destroy-twice.
func scAHDestroyTwice(e *Env) {
	ah, err := e.PD().CreateAH(e.AV())
	e.Must(err, "ibv_create_ah")
	e.Must(ah.Destroy(), "ibv_destroy_ah")
	e.NoPanic("second ibv_destroy_ah", func() { e.ExpectError(ah.Destroy(), "second ibv_destroy_ah") })
}
