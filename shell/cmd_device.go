package shell

import (
	"errors"
	"fmt"
	"github.com/vsh-rdma/vsh/shell/render"
	"strings"
	"time"

	"github.com/vsh-rdma/vsh/verbs"
)

func devicesCmd() *command {
	return &command{Name: "devices", Group: gDevice, Usage: "devices",
		Summary: "List the RDMA devices (ibv_get_device_list), and what A and B stand for",
		Help: "Lists the devices the backend offers, as ibv_devices does. Scripts name devices A and B so that " +
			"they run anywhere: A is the first device and B the second, or the first again where there is only one " +
			"(a single rxe0: the two ends then talk over loopback, as rxe allows).",
		run: cmdDevices}
}

func cmdDevices(c *call) error {
	devs, err := c.s.prov.Devices()
	if err != nil {
		return err
	}
	c.verbs(VerbCall{Name: "ibv_get_device_list", Args: "", Result: fmt.Sprintf("= %d device%s", len(devs), plural(len(devs)))})
	var rows [][]string
	for _, d := range devs {
		rows = append(rows, []string{d.Name(), fmt.Sprintf("%016x", d.GUID())})
	}
	if len(rows) > 0 {
		c.out.add(render.Table([]string{"device", "node_guid"}, rows))
	}
	if len(devs) > 0 {
		b := devs[0].Name()
		if len(devs) > 1 {
			b = devs[1].Name()
		}
		c.line("A = %s, B = %s", devs[0].Name(), b)
	}
	return nil
}

func devinfoCmd() *command {
	return &command{Name: "devinfo", Group: gDevice, Usage: "devinfo [DEV] [-v]",
		Summary: "Print a device's attributes and ports, as ibv_devinfo does",
		Help:    "Opens the device, queries it and its ports, and closes it again. With -v it prints every limit and the GID table.",
		Args: []argSpec{pos("DEV", vDevice, false, "a device: sim0, A or B; all devices when omitted"),
			flag("-v", "verbose: every device limit and the GID table", "verbose")},
		run: cmdDevinfo}
}

func cmdDevinfo(c *call) error {
	var devs []verbs.Device
	if len(c.a.pos) > 0 {
		d, err := c.s.device(c.a.pos[0].text)
		if err != nil {
			return err
		}
		devs = []verbs.Device{d}
	} else {
		devs = c.s.devs
	}
	verbose := c.a.flags["-v"]
	for i, d := range devs {
		if i > 0 {
			c.line("")
		}
		ctx, err := d.Open()
		if err != nil {
			return err
		}
		err = devinfo(c, d, ctx, verbose)
		if cerr := ctx.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func devinfo(c *call, d verbs.Device, ctx verbs.Context, verbose bool) error {
	attr, err := ctx.QueryDevice()
	if err != nil {
		return err
	}
	c.verbs(VerbCall{Name: "ibv_open_device", Args: d.Name()}, VerbCall{Name: "ibv_query_device", Bare: true},
		VerbCall{Name: "ibv_query_port", Bare: true}, VerbCall{Name: "ibv_close_device", Bare: true})
	pairs := [][2]string{
		{"hca_id", d.Name()},
		{"fw_ver", attr.FWVer},
		{"node_guid", guid(attr.NodeGUID)},
		{"sys_image_guid", guid(attr.SysImageGUID)},
		{"vendor_id", fmt.Sprintf("0x%04x", attr.VendorID)},
		{"vendor_part_id", fmt.Sprint(attr.VendorPartID)},
		{"hw_ver", fmt.Sprintf("0x%x", attr.HWVer)},
		{"phys_port_cnt", fmt.Sprint(attr.PhysPortCnt)},
	}
	if verbose {
		pairs = append(pairs, deviceAttrPairs(attr)...)
	}
	c.out.add(render.KV(pairs))
	for p := 1; p <= int(attr.PhysPortCnt); p++ {
		pa, err := ctx.QueryPort(uint8(p))
		if err != nil {
			return err
		}
		c.line("  port %d:", p)
		pp := [][2]string{
			{"state", fmt.Sprintf("%s (%d)", pa.State, pa.State)},
			{"max_mtu", fmt.Sprintf("%s (%d)", pa.MaxMTU.Short(), pa.MaxMTU)},
			{"active_mtu", fmt.Sprintf("%s (%d)", pa.ActiveMTU.Short(), pa.ActiveMTU)},
			{"sm_lid", fmt.Sprint(pa.SMLID)},
			{"port_lid", fmt.Sprint(pa.LID)},
			{"port_lmc", fmt.Sprintf("0x%02x", pa.LMC)},
			{"link_layer", pa.LinkLayer.Short()},
		}
		if verbose {
			pp = append(pp, [][2]string{
				{"max_msg_sz", fmt.Sprintf("0x%x", pa.MaxMsgSz)},
				{"port_cap_flags", fmt.Sprintf("0x%08x", pa.PortCapFlags)},
				{"max_vl_num", fmt.Sprint(pa.MaxVLNum)},
				{"bad_pkey_cntr", fmt.Sprintf("0x%x", pa.BadPKeyCntr)},
				{"qkey_viol_cntr", fmt.Sprintf("0x%x", pa.QKeyViolCntr)},
				{"sm_sl", fmt.Sprint(pa.SMSL)},
				{"pkey_tbl_len", fmt.Sprint(pa.PKeyTblLen)},
				{"gid_tbl_len", fmt.Sprint(pa.GIDTblLen)},
				{"subnet_timeout", fmt.Sprint(pa.SubnetTimeout)},
				{"init_type_reply", fmt.Sprint(pa.InitTypeReply)},
				{"active_width", fmt.Sprint(pa.ActiveWidth)},
				{"active_speed", fmt.Sprint(pa.ActiveSpeed)},
				{"phys_state", fmt.Sprint(pa.PhysState)},
			}...)
		}
		c.out.add(indent(render.KV(pp), "    "))
		if verbose {
			rows := gidRows(ctx, uint8(p), pa.GIDTblLen)
			if len(rows) > 0 {
				c.out.add(indent(render.Table([]string{"index", "GID", "type"}, rows), "    "))
			}
		}
	}
	return nil
}

func guid(g uint64) string {
	return fmt.Sprintf("%04x:%04x:%04x:%04x", g>>48, (g>>32)&0xffff, (g>>16)&0xffff, g&0xffff)
}

func indent(s, pre string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = pre + l
		}
	}
	return strings.Join(lines, "\n")
}

// gidScan is how many GID table entries query_gid (without index=) and
// devinfo read: RoCE fills the first few (one per address of the netdev),
// and a query per entry of rxe's 1024 would make the listing slow on a real
// device for nothing.
const gidScan = 256

// gidRows lists the non-zero entries among the first gidScan of a port's
// GID table.
func gidRows(ctx verbs.Context, port uint8, n int) [][]string {
	var rows [][]string
	for i := 0; i < min(n, gidScan); i++ {
		g, err := ctx.QueryGID(port, i)
		if err != nil || g.IsZero() {
			continue
		}
		typ := "-"
		if t, err := ctx.QueryGIDType(port, i); err == nil {
			typ = t.Short()
		}
		rows = append(rows, []string{fmt.Sprint(i), g.String(), typ})
	}
	return rows
}

func deviceAttrPairs(a verbs.DeviceAttr) [][2]string {
	return [][2]string{
		{"max_mr_size", fmt.Sprintf("0x%x", a.MaxMRSize)},
		{"page_size_cap", fmt.Sprintf("0x%x", a.PageSizeCap)},
		{"max_qp", fmt.Sprint(a.MaxQP)},
		{"max_qp_wr", fmt.Sprint(a.MaxQPWR)},
		{"device_cap_flags", fmt.Sprintf("0x%08x", a.DeviceCapFlags)},
		{"max_sge", fmt.Sprint(a.MaxSGE)},
		{"max_sge_rd", fmt.Sprint(a.MaxSGERd)},
		{"max_cq", fmt.Sprint(a.MaxCQ)},
		{"max_cqe", fmt.Sprint(a.MaxCQE)},
		{"max_mr", fmt.Sprint(a.MaxMR)},
		{"max_pd", fmt.Sprint(a.MaxPD)},
		{"max_qp_rd_atom", fmt.Sprint(a.MaxQPRdAtom)},
		{"max_ee_rd_atom", fmt.Sprint(a.MaxEECRdAtom)},
		{"max_res_rd_atom", fmt.Sprint(a.MaxResRdAtom)},
		{"max_qp_init_rd_atom", fmt.Sprint(a.MaxQPInitRdAtom)},
		{"max_ee_init_rd_atom", fmt.Sprint(a.MaxEECInitRdAtom)},
		{"atomic_cap", atomicCap(a.AtomicCap)},
		{"max_ee", fmt.Sprint(a.MaxEE)},
		{"max_rdd", fmt.Sprint(a.MaxRDD)},
		{"max_mw", fmt.Sprint(a.MaxMW)},
		{"max_raw_ipv6_qp", fmt.Sprint(a.MaxRawIPv6QP)},
		{"max_raw_ethy_qp", fmt.Sprint(a.MaxRawEthyQP)},
		{"max_mcast_grp", fmt.Sprint(a.MaxMcastGrp)},
		{"max_mcast_qp_attach", fmt.Sprint(a.MaxMcastQPAttach)},
		{"max_total_mcast_qp_attach", fmt.Sprint(a.MaxTotalMcastQPAtt)},
		{"max_ah", fmt.Sprint(a.MaxAH)},
		{"max_fmr", fmt.Sprint(a.MaxFMR)},
		{"max_map_per_fmr", fmt.Sprint(a.MaxMapPerFMR)},
		{"max_srq", fmt.Sprint(a.MaxSRQ)},
		{"max_srq_wr", fmt.Sprint(a.MaxSRQWR)},
		{"max_srq_sge", fmt.Sprint(a.MaxSRQSGE)},
		{"max_pkeys", fmt.Sprint(a.MaxPKeys)},
		{"local_ca_ack_delay", fmt.Sprint(a.LocalCAAckDelay)},
		{"max_inline_data", fmt.Sprint(a.MaxInlineData)},
	}
}

func atomicCap(v uint32) string {
	switch v {
	case 0:
		return "ATOMIC_NONE (0)"
	case 1:
		return "ATOMIC_HCA (1)"
	case 2:
		return "ATOMIC_GLOB (2)"
	}
	return fmt.Sprint(v)
}

func openDeviceCmd() *command {
	return &command{Name: "open_device", Aliases: []string{"open"}, Group: gDevice, Usage: "open_device DEV",
		Summary: "Open a device (ibv_open_device) and get a context: ctx0",
		Help:    "Every other object hangs off a context. DEV is a device name (sim0, rxe0) or A or B.",
		Args:    []argSpec{pos("DEV", vDevice, true, "a device: sim0, A or B")},
		run:     cmdOpenDevice}
}

func cmdOpenDevice(c *call) error {
	d, err := c.s.device(c.a.pos[0].text)
	if err != nil {
		return err
	}
	ctx, err := d.Open()
	if err != nil {
		return err
	}
	o := c.s.h.add(&object{kind: kCtx, ctx: ctx, dev: d.Name()})
	c.created(o)
	dev := d.Name()
	if w := c.a.pos[0].text; w != d.Name() {
		dev = w + " = " + dev
	}
	c.verbs(VerbCall{Name: "ibv_open_device", Args: dev, Result: "→ " + c.s.hn(o)})
	return nil
}

func closeDeviceCmd() *command {
	return &command{Name: "close_device", Aliases: []string{"close"}, Group: gDevice, Usage: "close_device CTX",
		Summary: "Close a context (ibv_close_device); what was made from it goes too",
		Help: "As with libibverbs, closing a context frees every object still made from it (the kernel cleans up when " +
			"the device file closes), so their handles go too. A careful program destroys them first, newest first.",
		Args: []argSpec{argCtx}, run: cmdCloseDevice}
}

func cmdCloseDevice(c *call) error {
	o, err := c.obj(0, kCtx)
	if err != nil {
		return err
	}
	if err := o.ctx.Close(); err != nil {
		return busyHint(err, c.s, o)
	}
	c.verbs(VerbCall{Name: "ibv_close_device", Args: c.s.hn(o), Result: "= 0"})
	var gone []string
	for _, x := range c.s.h.all() {
		if x != o && ctxOf(x) == o.ctx {
			gone = append(gone, x.name)
			c.s.forget(x)
		}
	}
	c.s.forget(o)
	if len(gone) > 0 {
		c.line("freed with it: %s", strings.Join(gone, ", "))
	}
	return nil
}

func queryDeviceCmd() *command {
	return &command{Name: "query_device", Group: gDevice, Usage: "query_device CTX",
		Summary: "Print the device's attributes and limits (ibv_query_device)",
		Args:    []argSpec{argCtx}, run: cmdQueryDevice}
}

func cmdQueryDevice(c *call) error {
	o, err := c.obj(0, kCtx)
	if err != nil {
		return err
	}
	a, err := o.ctx.QueryDevice()
	if err != nil {
		return err
	}
	c.verbs(VerbCall{Name: "ibv_query_device", Args: c.s.hn(o), Result: "= 0"})
	pairs := [][2]string{
		{"fw_ver", a.FWVer},
		{"node_guid", guid(a.NodeGUID)},
		{"sys_image_guid", guid(a.SysImageGUID)},
		{"vendor_id", fmt.Sprintf("0x%04x", a.VendorID)},
		{"vendor_part_id", fmt.Sprint(a.VendorPartID)},
		{"hw_ver", fmt.Sprintf("0x%x", a.HWVer)},
		{"phys_port_cnt", fmt.Sprint(a.PhysPortCnt)},
	}
	c.out.add(render.KV(append(pairs, deviceAttrPairs(a)...)))
	return nil
}

func queryPortCmd() *command {
	return &command{Name: "query_port", Group: gDevice, Usage: "query_port CTX [port=1]",
		Summary: "Print a port's attributes (ibv_query_port): state, MTUs, link layer",
		Help:    "On RoCE (link_layer Ethernet) the port's active_mtu is what path_mtu should not exceed.",
		Args:    []argSpec{argCtx, key("port", vNum, "1", "the port number")}, run: cmdQueryPort}
}

func cmdQueryPort(c *call) error {
	o, err := c.obj(0, kCtx)
	if err != nil {
		return err
	}
	port, err := c.u8("port")
	if err != nil {
		return err
	}
	pa, err := o.ctx.QueryPort(port)
	if err != nil {
		return err
	}
	c.verbs(VerbCall{Name: "ibv_query_port", Args: fmt.Sprintf("%s, %d", c.s.hn(o), port), Result: "= 0"})
	flags := fmt.Sprint(pa.Flags)
	if pa.Flags&verbs.PortFlagGRHRequired != 0 {
		flags = "IBV_QPF_GRH_REQUIRED"
	}
	c.out.add(render.KV([][2]string{
		{"state", fmt.Sprintf("%s (%d)", pa.State, pa.State)},
		{"max_mtu", fmt.Sprintf("%s (%d)", pa.MaxMTU, pa.MaxMTU)},
		{"active_mtu", fmt.Sprintf("%s (%d)", pa.ActiveMTU, pa.ActiveMTU)},
		{"gid_tbl_len", fmt.Sprint(pa.GIDTblLen)},
		{"port_cap_flags", fmt.Sprintf("0x%08x", pa.PortCapFlags)},
		{"max_msg_sz", fmt.Sprintf("0x%x", pa.MaxMsgSz)},
		{"bad_pkey_cntr", fmt.Sprint(pa.BadPKeyCntr)},
		{"qkey_viol_cntr", fmt.Sprint(pa.QKeyViolCntr)},
		{"pkey_tbl_len", fmt.Sprint(pa.PKeyTblLen)},
		{"lid", fmt.Sprint(pa.LID)},
		{"sm_lid", fmt.Sprint(pa.SMLID)},
		{"lmc", fmt.Sprint(pa.LMC)},
		{"max_vl_num", fmt.Sprint(pa.MaxVLNum)},
		{"sm_sl", fmt.Sprint(pa.SMSL)},
		{"subnet_timeout", fmt.Sprint(pa.SubnetTimeout)},
		{"active_width", fmt.Sprint(pa.ActiveWidth)},
		{"active_speed", fmt.Sprint(pa.ActiveSpeed)},
		{"phys_state", fmt.Sprint(pa.PhysState)},
		{"link_layer", fmt.Sprintf("%s (%s)", pa.LinkLayer, pa.LinkLayer.Short())},
		{"flags", flags},
	}))
	return nil
}

func queryGIDCmd() *command {
	return &command{Name: "query_gid", Group: gDevice, Usage: "query_gid CTX [index=N] [port=1]",
		Summary: "Print a GID (ibv_query_gid), or the whole GID table",
		Help: "Without index= it prints every entry of the port's GID table with its type (ibv_query_gid_type). " +
			"On RoCE v2 the IPv4-mapped GID (::ffff:a.b.c.d) is the one two hosts on an IPv4 network use; pass its index as sgid_index.",
		Args: []argSpec{argCtx, key("index", vNum, "all", "the GID index", "gid_index"), key("port", vNum, "1", "the port number")},
		run:  cmdQueryGID}
}

func cmdQueryGID(c *call) error {
	o, err := c.obj(0, kCtx)
	if err != nil {
		return err
	}
	port, err := c.u8("port")
	if err != nil {
		return err
	}
	if c.has("index") {
		idx, err := c.intOr("index", 0)
		if err != nil {
			return err
		}
		g, err := o.ctx.QueryGID(port, idx)
		if err != nil {
			return err
		}
		c.verbs(VerbCall{Name: "ibv_query_gid", Args: fmt.Sprintf("%s, %d, %d", c.s.hn(o), port, idx), Result: "= " + g.String()})
		typ, err := o.ctx.QueryGIDType(port, idx)
		if err == nil {
			c.verbs(VerbCall{Name: "ibv_query_gid_type", Args: fmt.Sprintf("%s, %d, %d", c.s.hn(o), port, idx), Result: "= " + typ.String()})
		}
		pairs := [][2]string{{"gid", g.String()}, {"wire form", g.Wire()}}
		if v4, ok := g.IPv4(); ok {
			pairs = append(pairs, [2]string{"ipv4", v4.String()})
		}
		c.out.add(render.KV(pairs))
		return nil
	}
	pa, err := o.ctx.QueryPort(port)
	if err != nil {
		return err
	}
	c.verbs(VerbCall{Name: "ibv_query_gid", Args: fmt.Sprintf("%s, %d, 0..%d", c.s.hn(o), port, min(pa.GIDTblLen, gidScan)-1)},
		VerbCall{Name: "ibv_query_gid_type", Bare: true})
	if pa.GIDTblLen > gidScan {
		c.line("the table has %d entries; the first %d are listed (query_gid %s index=N reads any one)", pa.GIDTblLen, gidScan, c.s.hn(o))
	}
	rows := gidRows(o.ctx, port, pa.GIDTblLen)
	if len(rows) == 0 {
		c.line("the GID table is empty")
		return nil
	}
	c.out.add(render.Table([]string{"index", "GID", "type"}, rows))
	return nil
}

func asyncEventsCmd() *command {
	return &command{Name: "async_events", Group: gDevice, Usage: "async_events CTX [wait=DURATION]",
		Summary: "Read and acknowledge the pending async events (ibv_get_async_event, ibv_ack_async_event)",
		Help: "Async events report what no completion can: a QP that went to the error state, an SRQ below its limit, " +
			"a port that changed state. wait= waits that long for the first event.",
		Args: []argSpec{argCtx, key("wait", vDuration, "0", "how long to wait for the first event")},
		run:  cmdAsyncEvents}
}

func cmdAsyncEvents(c *call) error {
	o, err := c.obj(0, kCtx)
	if err != nil {
		return err
	}
	wait, err := c.dur("wait")
	if err != nil {
		return err
	}
	n := 0
	for n < 1000 {
		var ev verbs.AsyncEvent
		_, err := c.s.waitIn(wait, func(d time.Duration) (bool, error) {
			var err error
			ev, err = o.ctx.GetAsyncEvent(d)
			return verbs.ErrnoOf(err) != verbs.EAGAIN, err
		})
		if err != nil {
			if c.s.interrupted() && n == 0 {
				return c.s.stopped("async_events stopped waiting for an event of %s", c.s.hn(o))
			}
			if verbs.ErrnoOf(err) == verbs.EAGAIN {
				break
			}
			return err
		}
		wait = 0
		n++
		c.verbs(VerbCall{Name: "ibv_get_async_event", Args: c.s.hn(o), Result: fmt.Sprintf("= %s", c.s.describeEvent(ev))})
		o.ctx.AckAsyncEvent(ev)
		c.verbs(VerbCall{Name: "ibv_ack_async_event", Bare: true})
	}
	if n == 0 {
		c.verbs(VerbCall{Name: "ibv_get_async_event", Args: c.s.hn(o), Result: ": EAGAIN (no event pending)"})
	}
	return nil
}

// describeEvent prints an async event with the handle of its object.
func (s *Shell) describeEvent(ev verbs.AsyncEvent) string {
	what := ""
	for _, o := range s.h.all() {
		switch {
		case ev.QP != nil && o.qp == ev.QP, ev.CQ != nil && o.cq == ev.CQ, ev.SRQ != nil && o.srq == ev.SRQ:
			what = " on " + o.name
		}
	}
	if what == "" {
		if ev.QP != nil {
			what = " on qp_num " + hex24(ev.QP.Num())
		} else if ev.QP == nil && ev.CQ == nil && ev.SRQ == nil {
			what = fmt.Sprintf(" on port %d", ev.PortNum)
		}
	}
	return fmt.Sprintf("%s (%s)%s", ev.Type, ev.Type.Str(), what)
}

// waitErr reports whether err is "nothing yet" (EAGAIN or a timeout).
func waitErr(err error) bool {
	n := verbs.ErrnoOf(err)
	return n == verbs.EAGAIN || n == verbs.ETIMEDOUT || errors.Is(err, errTimeout)
}

var errTimeout = errors.New("timed out")
