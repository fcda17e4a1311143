package sim_test

import (
	"flag"
	"strings"
	"testing"

	"github.com/vsh-rdma/vsh/verbs"
	"github.com/vsh-rdma/vsh/verbs/sim"
	"github.com/vsh-rdma/vsh/verbs/verbstest"
)

// simCaps is what the simulator offers beyond plain verbs. Add
// verbstest.CapDataPath when the data path lands, and the optional
// interfaces as the simulator implements them.
const simCaps = verbstest.CapExplain | verbstest.CapTwoDevices

// simKnownFailures lists the conformance scenarios the simulator fails
// today, each with the behaviour the sources require. They are bugs in
// verbs/sim, to be fixed there; the suite reports them as expected
// failures and fails as soon as one of them passes, so remove an entry when
// its bug is fixed.
var simKnownFailures = map[string]string{
	"port/grh-required-flag": "ibv_query_port reports flags 0; rxe's port has IBV_QPF_GRH_REQUIRED (rdma_is_grh_required " +
		"matches RDMA_CORE_CAP_PROT_ROCE_UDP_ENCAP, uverbs_std_types_device.c copy_port_attr_to_resp)",
	"modify/privileged-qkey": "a UD Q_Key with the high bit (0x80010000) is accepted; an unprivileged process gets EPERM " +
		"(uverbs_cmd.c modify_qp, rdma_nl_get_privileged_qkey, Debian 6.1.192)",
	"qp/raw-packet-needs-cap-net-raw": "IBV_QPT_RAW_PACKET gives EOPNOTSUPP; without CAP_NET_RAW uverbs refuses it with EPERM " +
		"before rxe sees it (uverbs_std_types_qp.c UVERBS_METHOD_QP_CREATE)",
	"modify/uc-sqd-av-implies-port": "UC SQD→SQD with IBV_QP_AV alone succeeds; uverbs adds IBV_QP_PORT to a lone IBV_QP_AV " +
		"outside INIT→RTR and the UC SQD→SQD row does not allow it: EINVAL (uverbs_cmd.c modify_qp, qp_state_table)",
}

// TestConformance runs the conformance suite (verbs/verbstest) on the
// simulator: every scenario a single rxe device would run, plus those that
// need two devices.
func TestConformance(t *testing.T) {
	minRun := 100
	if f := flag.Lookup("test.run"); f != nil && strings.Contains(f.Value.String(), "/") {
		minRun = 0 // -run picked some scenarios
	}
	rep := verbstest.Run(t, func(t *testing.T) verbs.Provider {
		return sim.New(sim.Config{Devices: 2, Seed: 1})
	}, verbstest.Options{
		Has:           simCaps,
		ActiveMTU:     verbs.MTU1024, // a 1500-byte netdev, as in the lab
		KnownFailures: simKnownFailures,
		MinRun:        minRun,
	})
	for _, n := range rep.NotRun {
		if n.Missing != verbstest.CapDataPath {
			t.Errorf("scenario %s did not run for lack of %v; only data-path scenarios may wait for the data path", n.Name, n.Missing)
		}
	}
}
