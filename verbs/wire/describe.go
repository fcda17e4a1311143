package wire

import (
	"fmt"
	"strconv"
	"strings"
)

// Describe returns a one-line summary of a packet, for traces:
//
//	RC SEND_FIRST dqpn=0x000011 psn=0x00a3f1 ackreq len=1024
//	RC RDMA_WRITE_ONLY dqpn=0x000011 psn=0x000002 va=0x7f0000001000 rkey=0x00001234 dlen=16 len=16
//	RC ACKNOWLEDGE dqpn=0x000012 psn=0x000002 aeth=ACK msn=2
//	UD SEND_ONLY dqpn=0x000012 psn=0x000007 qkey=0x11111111 sqpn=0x000011 len=64
//	XRC SEND_ONLY dqpn=0x000011 psn=0x000003 ackreq srqn=0x000041 len=5
//
// After the transport and operation come the destination QPN and PSN, the
// BTH flags that are set (se, mig, ackreq, fecn, becn), a P_Key other than
// 0xffff, then the extension header fields in wire order, then the payload
// length for opcodes that carry payload.
func Describe(p *Packet) string { return string(AppendDescribe(nil, p)) }

// AppendDescribe appends Describe's line to b. It does not allocate when b
// has room, so a trace can format every packet into one reused buffer.
func AppendDescribe(b []byte, p *Packet) []byte {
	op := p.BTH.Opcode
	b = append(b, op.Transport().String()...)
	b = append(b, ' ')
	b = append(b, op.Name()...)
	b = append(b, " dqpn="...)
	b = appendHex(b, uint64(p.BTH.DestQP&QPNMask), 6)
	b = append(b, " psn="...)
	b = appendHex(b, uint64(p.BTH.PSN&PSNMask), 6)
	if p.BTH.SE {
		b = append(b, " se"...)
	}
	if p.BTH.MigReq {
		b = append(b, " mig"...)
	}
	if p.BTH.AckReq {
		b = append(b, " ackreq"...)
	}
	if p.BTH.FECN {
		b = append(b, " fecn"...)
	}
	if p.BTH.BECN {
		b = append(b, " becn"...)
	}
	if p.BTH.PKey != DefaultPKey {
		b = append(b, " pkey="...)
		b = appendHex(b, uint64(p.BTH.PKey), 4)
	}
	if p.BTH.TVer != 0 {
		b = append(b, " tver="...)
		b = strconv.AppendUint(b, uint64(p.BTH.TVer), 10)
	}
	h := op.Headers()
	if h&HasDETH != 0 {
		b = append(b, " qkey="...)
		b = appendHex(b, uint64(p.DETH.QKey), 8)
		b = append(b, " sqpn="...)
		b = appendHex(b, uint64(p.DETH.SrcQP&QPNMask), 6)
	}
	if h&HasXRCETH != 0 {
		b = append(b, " srqn="...)
		b = appendHex(b, uint64(p.XRCETH&0xffffff), 6)
	}
	if h&HasRETH != 0 {
		b = append(b, " va="...)
		b = appendHex(b, p.RETH.VA, 1)
		b = append(b, " rkey="...)
		b = appendHex(b, uint64(p.RETH.RKey), 8)
		b = append(b, " dlen="...)
		b = strconv.AppendUint(b, uint64(p.RETH.DMALen), 10)
	}
	if h&HasAtomicETH != 0 {
		b = append(b, " va="...)
		b = appendHex(b, p.AtomicETH.VA, 1)
		b = append(b, " rkey="...)
		b = appendHex(b, uint64(p.AtomicETH.RKey), 8)
		if op&opMaskOperation == RCCompareSwap {
			b = append(b, " swap="...)
			b = appendHex(b, p.AtomicETH.SwapAdd, 1)
			b = append(b, " cmp="...)
			b = appendHex(b, p.AtomicETH.Compare, 1)
		} else {
			b = append(b, " add="...)
			b = appendHex(b, p.AtomicETH.SwapAdd, 1)
		}
	}
	if h&HasAETH != 0 {
		b = append(b, " aeth="...)
		b = appendSyndrome(b, p.AETH.Syndrome)
		b = append(b, " msn="...)
		b = strconv.AppendUint(b, uint64(p.AETH.MSN&0xffffff), 10)
	}
	if h&HasAtomicAckETH != 0 {
		b = append(b, " orig="...)
		b = appendHex(b, p.AtomicAckETH, 1)
	}
	if h&HasImmDt != 0 {
		b = append(b, " imm="...)
		b = appendHex(b, uint64(p.ImmDt), 8)
	}
	if h&HasIETH != 0 {
		b = append(b, " inv_rkey="...)
		b = appendHex(b, uint64(p.IETH), 8)
	}
	if op.HasPayload() || len(p.Payload) > 0 {
		b = append(b, " len="...)
		b = strconv.AppendUint(b, uint64(len(p.Payload)), 10)
	}
	return b
}

// appendSyndrome appends Syndrome.String without allocating.
func appendSyndrome(b []byte, s Syndrome) []byte {
	switch s.Type() {
	case SynACK:
		b = append(b, "ACK"...)
		if s.Credits() != CreditsUnlimited {
			b = append(b, "(credits="...)
			b = strconv.AppendUint(b, uint64(s.Credits()), 10)
			b = append(b, ')')
		}
		return b
	case SynRNRNAK:
		b = append(b, "RNR_NAK(timer="...)
		b = strconv.AppendUint(b, uint64(s.Value()), 10)
		b = append(b, ':')
		us := ibtaRNRMicros[s.Value()]
		b = strconv.AppendInt(b, us/1000, 10)
		b = append(b, '.')
		if frac := us % 1000 / 10; frac < 10 {
			b = append(b, '0')
			b = strconv.AppendInt(b, frac, 10)
		} else {
			b = strconv.AppendInt(b, frac, 10)
		}
		return append(b, "ms)"...)
	case SynNAK:
		b = append(b, "NAK("...)
		b = append(b, s.NAKCode().String()...)
		return append(b, ')')
	}
	b = append(b, "RESERVED("...)
	b = appendHex(b, uint64(s), 2)
	return append(b, ')')
}

const hexDigits = "0123456789abcdef"

// appendHex appends 0x and v in lower-case hex, zero-padded to at least
// width digits.
func appendHex(b []byte, v uint64, width int) []byte {
	var buf [16]byte
	i := len(buf)
	for v != 0 || len(buf)-i < width {
		i--
		buf[i] = hexDigits[v&0xf]
		v >>= 4
	}
	b = append(b, '0', 'x')
	return append(b, buf[i:]...)
}

// Explain returns a multi-line, Wireshark-like breakdown of a packet for
// the shell's explain command: the IP and UDP framing when n is not nil,
// every BTH field with its bits, each extension header, payload, pad and
// ICRC, then what the packet means to the QPs. With a Network the ICRC
// shown is the one the packet should carry; without one, the one it
// carries.
func Explain(p *Packet, n *Network) string {
	var w strings.Builder
	op := p.BTH.Opcode
	l := p.Len()
	icrc, icrcNote := p.ICRC, "as carried"
	if n != nil && n.check() == nil {
		ipl := n.ipHeaderLen()
		fmt.Fprintf(&w, "%s, Src: %s, Dst: %s\n", ipName(n), n.Src.Unmap(), n.Dst.Unmap())
		if ipl == IPv4HeaderLen {
			id := IPv4ID(p.BTH.PSN)
			if n.FixedID {
				id = n.ID
			}
			df := "DF"
			if n.NoDF {
				df = "no DF"
			}
			fmt.Fprintf(&w, "    Total Length: %d, Identification: 0x%04x, %s, TOS: 0x%02x, TTL: %d\n",
				ipl+UDPHeaderLen+l, id, df, n.TrafficClass, n.hopLimit())
		} else {
			fmt.Fprintf(&w, "    Payload Length: %d, Traffic Class: 0x%02x, Flow Label: 0x%05x, Hop Limit: %d\n",
				UDPHeaderLen+l, n.TrafficClass, n.FlowLabel&0xfffff, n.hopLimit())
		}
		fmt.Fprintf(&w, "User Datagram Protocol, Src Port: %d, Dst Port: %d, Length: %d\n", n.SrcPort, n.dstPort(), UDPHeaderLen+l)
		if p.check() == nil {
			if b, err := p.Append(make([]byte, 0, l), n); err == nil {
				icrc, icrcNote = CarriedICRC(b), "computed over the masked IP, UDP and BTH headers"
			}
		}
	}
	fmt.Fprintf(&w, "InfiniBand over UDP (RoCEv2), %d bytes\n", l)
	fmt.Fprintf(&w, "  Base Transport Header (BTH), %d bytes\n", BTHLen)
	fmt.Fprintf(&w, "    Opcode:          0x%02x  %s (%s, %s)\n", uint8(op), op, op.Transport().LongName(), op.Name())
	fmt.Fprintf(&w, "    Solicited Event: %d\n", b2i(p.BTH.SE))
	fmt.Fprintf(&w, "    MigReq:          %d\n", b2i(p.BTH.MigReq))
	fmt.Fprintf(&w, "    Pad Count:       %d\n", p.PadCount())
	fmt.Fprintf(&w, "    Header Version:  %d\n", p.BTH.TVer)
	fmt.Fprintf(&w, "    Partition Key:   0x%04x\n", p.BTH.PKey)
	fmt.Fprintf(&w, "    FECN, BECN:      %d, %d\n", b2i(p.BTH.FECN), b2i(p.BTH.BECN))
	fmt.Fprintf(&w, "    Destination QP:  0x%06x\n", p.BTH.DestQP&QPNMask)
	fmt.Fprintf(&w, "    Acknowledge Req: %d\n", b2i(p.BTH.AckReq))
	fmt.Fprintf(&w, "    PSN:             0x%06x (%d)\n", uint32(p.BTH.PSN&PSNMask), uint32(p.BTH.PSN&PSNMask))
	h := op.Headers()
	if h&HasDETH != 0 {
		fmt.Fprintf(&w, "  Datagram Extended Transport Header (DETH), %d bytes\n", DETHLen)
		fmt.Fprintf(&w, "    Queue Key:       0x%08x\n", p.DETH.QKey)
		fmt.Fprintf(&w, "    Source QP:       0x%06x\n", p.DETH.SrcQP&QPNMask)
	}
	if h&HasXRCETH != 0 {
		fmt.Fprintf(&w, "  XRC Extended Transport Header (XRCETH), %d bytes\n", XRCETHLen)
		fmt.Fprintf(&w, "    XRC SRQ:         0x%06x\n", p.XRCETH&0xffffff)
	}
	if h&HasRETH != 0 {
		fmt.Fprintf(&w, "  RDMA Extended Transport Header (RETH), %d bytes\n", RETHLen)
		fmt.Fprintf(&w, "    Virtual Address: 0x%016x\n", p.RETH.VA)
		fmt.Fprintf(&w, "    Remote Key:      0x%08x\n", p.RETH.RKey)
		fmt.Fprintf(&w, "    DMA Length:      %d\n", p.RETH.DMALen)
	}
	if h&HasAtomicETH != 0 {
		fmt.Fprintf(&w, "  Atomic Extended Transport Header (AtomicETH), %d bytes\n", AtomicETHLen)
		fmt.Fprintf(&w, "    Virtual Address: 0x%016x\n", p.AtomicETH.VA)
		fmt.Fprintf(&w, "    Remote Key:      0x%08x\n", p.AtomicETH.RKey)
		fmt.Fprintf(&w, "    Swap (Or Add):   0x%016x\n", p.AtomicETH.SwapAdd)
		fmt.Fprintf(&w, "    Compare:         0x%016x\n", p.AtomicETH.Compare)
	}
	if h&HasAETH != 0 {
		s := p.AETH.Syndrome
		fmt.Fprintf(&w, "  ACK Extended Transport Header (AETH), %d bytes\n", AETHLen)
		fmt.Fprintf(&w, "    Syndrome:        0x%02x  %s\n", uint8(s), s)
		switch s.Type() {
		case SynACK:
			note := ""
			if s.Credits() == CreditsUnlimited {
				note = " (unlimited, what rxe always sends)"
			}
			fmt.Fprintf(&w, "                     ACK; credit code %d%s\n", s.Credits(), note)
		case SynRNRNAK:
			note := ""
			if d := s.RNRTimer().Duration(); d != s.RNRTimer().IBTADuration() {
				note = fmt.Sprintf(" (rxe waits %d.%02dms, a typo in its table)", d.Microseconds()/1000, d.Microseconds()%1000/10)
			}
			fmt.Fprintf(&w, "                     receiver not ready: no receive WQE; retry after %s%s\n", s.RNRTimer(), note)
		case SynNAK:
			fmt.Fprintf(&w, "                     %s\n", s.NAKCode().Meaning())
		}
		fmt.Fprintf(&w, "    MSN:             %d\n", p.AETH.MSN&0xffffff)
	}
	if h&HasAtomicAckETH != 0 {
		fmt.Fprintf(&w, "  Atomic ACK Extended Transport Header (AtomicAckETH), %d bytes\n", AtomicAckETHLen)
		fmt.Fprintf(&w, "    Original Data:   0x%016x\n", p.AtomicAckETH)
	}
	if h&HasImmDt != 0 {
		fmt.Fprintf(&w, "  Immediate Data (ImmDt), %d bytes\n", ImmDtLen)
		fmt.Fprintf(&w, "    Immediate Data:  0x%08x\n", p.ImmDt)
	}
	if h&HasIETH != 0 {
		fmt.Fprintf(&w, "  Invalidate Extended Transport Header (IETH), %d bytes\n", IETHLen)
		fmt.Fprintf(&w, "    Remote Key:      0x%08x\n", p.IETH)
	}
	if op.HasPayload() || len(p.Payload) > 0 {
		fmt.Fprintf(&w, "  Payload, %d bytes%s\n", len(p.Payload), hexPreview(p.Payload, 16))
		if pad := p.PadCount(); pad > 0 {
			fmt.Fprintf(&w, "  Pad, %d bytes (zeros, so that payload and pad fill whole 4-byte words)\n", pad)
		}
	}
	fmt.Fprintf(&w, "  Invariant CRC:   0x%08x (on the wire %02x %02x %02x %02x; %s)\n",
		icrc, byte(icrc), byte(icrc>>8), byte(icrc>>16), byte(icrc>>24), icrcNote)
	fmt.Fprintf(&w, "Meaning: %s\n", meaning(p))
	return w.String()
}

func ipName(n *Network) string {
	if n.IsIPv6() {
		return "Internet Protocol Version 6"
	}
	return "Internet Protocol Version 4"
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

func hexPreview(b []byte, max int) string {
	if len(b) == 0 {
		return ""
	}
	var s strings.Builder
	s.WriteString(": ")
	for i, c := range b {
		if i == max {
			s.WriteString(" ...")
			break
		}
		if i > 0 {
			s.WriteByte(' ')
		}
		fmt.Fprintf(&s, "%02x", c)
	}
	return s.String()
}

// meaning says in one sentence what a packet does.
func meaning(p *Packet) string {
	op := p.BTH.Opcode
	if !op.Valid() {
		return "an opcode vsh and rxe do not carry; rxe drops the packet"
	}
	var parts []string
	parts = append(parts, opSentence(op))
	an := anTransport(op.Transport()) // "an RC", "an XRC"
	if op.Has(HasAETH) {
		s := p.AETH.Syndrome
		switch s.Type() {
		case SynACK:
			if op&opMaskOperation == RCAcknowledge {
				parts[0] = an + " ACK: the responder has received every request up to PSN " + p.BTH.PSN.String() + ", so the requester can complete their WQEs"
			}
		case SynRNRNAK:
			parts[0] = an + " RNR NAK: the responder had no receive WQE for the request with PSN " + p.BTH.PSN.String() +
				" and dropped it; the requester waits " + s.RNRTimer().String() + " and resends from that PSN, and fails with IBV_WC_RNR_RETRY_EXC_ERR once rnr_retry runs out"
		case SynNAK:
			if s.NAKCode() == NAKPSNSequenceError {
				parts[0] = an + " NAK (PSN sequence error): the responder expected PSN " + p.BTH.PSN.String() +
					" and saw a later one; " + s.NAKCode().Meaning()
			} else {
				parts[0] = an + " NAK for the request with PSN " + p.BTH.PSN.String() + ": " + s.NAKCode().Meaning()
			}
		default:
			parts[0] = an + " acknowledgement with a reserved syndrome"
		}
	}
	from := "" // where a receive WQE comes from
	if op.Has(HasXRCETH) {
		parts = append(parts, "its XRCETH names the target's XRC SRQ "+string(appendHex(nil, uint64(p.XRCETH&0xffffff), 6))+
			", which must be in the XRC domain of the target QP (dqpn)")
		from = " from that SRQ"
	}
	if op.ConsumesRecvWQE() && op.CompletesRecvWQE() {
		parts = append(parts, "it takes a receive WQE"+from+" and completes it")
	} else if op.ConsumesRecvWQE() {
		parts = append(parts, "it takes a receive WQE"+from+", which the LAST packet completes")
	} else if op.CompletesRecvWQE() {
		parts = append(parts, "it completes the receive WQE the FIRST packet took")
	}
	if p.BTH.AckReq {
		parts = append(parts, "the sender asks for an ACK (AckReq)")
	}
	if p.BTH.SE {
		parts = append(parts, "the solicited event bit wakes a receiver waiting with solicited_only")
	}
	return strings.Join(parts, "; ") + "."
}

// opSentence describes an opcode in words: "first packet of an RC SEND".
func opSentence(op Opcode) string {
	an := anTransport(op.Transport())
	kind := ""
	switch o := op & opMaskOperation; {
	case op.Flags()&FlagSend != 0:
		kind = "SEND"
		if op.Has(HasImmDt) {
			kind = "SEND with immediate"
		} else if op.Has(HasIETH) {
			kind = "SEND with invalidate"
		}
	case op.Flags()&FlagWrite != 0:
		kind = "RDMA WRITE"
		if op.Has(HasImmDt) {
			kind = "RDMA WRITE with immediate"
		}
	case o == RCRDMAReadRequest:
		return an + " RDMA READ request: the responder answers with READ RESPONSE packets that use the PSNs from this one on"
	case o >= RCRDMAReadResponseFirst && o <= RCRDMAReadResponseOnly:
		kind = "RDMA READ response"
	case o == RCAcknowledge:
		return an + " acknowledgement for the requester's completer; its PSN acknowledges every request up to it"
	case o == RCAtomicAcknowledge:
		return an + " atomic acknowledgement carrying the value the remote memory held before the operation"
	case o == RCCompareSwap:
		return an + " atomic COMPARE SWAP on 8 bytes of remote memory"
	case o == RCFetchAdd:
		return an + " atomic FETCH ADD on 8 bytes of remote memory"
	}
	pos := "the middle packet"
	switch {
	case op.IsFirst() && op.IsLast():
		pos = "the only packet"
	case op.IsFirst():
		pos = "the first packet"
	case op.IsLast():
		pos = "the last packet"
	}
	return pos + " of " + an + " " + kind
}

// anTransport returns the transport's short name with its article, as it is
// read aloud: "an RC", "an RD", "an XRC", "a UC", "a UD".
func anTransport(t Transport) string {
	switch t {
	case RC, RD, XRC:
		return "an " + t.String()
	}
	return "a " + t.String()
}

// ExplainOpcode describes an opcode for the shell's explain command: its
// number and names, the headers it carries and what it does to the QPs.
func ExplainOpcode(op Opcode) string {
	var w strings.Builder
	fmt.Fprintf(&w, "%s (0x%02x): %s, %s\n", op, uint8(op), op.Transport().LongName(), op.Name())
	if !op.Valid() {
		fmt.Fprintf(&w, "  not an opcode vsh or rxe carries; rxe drops such packets\n")
		return w.String()
	}
	hdrs := "BTH"
	if h := op.Headers(); h != 0 {
		hdrs += "+" + h.String()
	}
	if op.HasPayload() {
		hdrs += ", then payload"
	}
	fmt.Fprintf(&w, "  headers:  %s (%d header bytes), then pad and ICRC\n", hdrs, op.HeaderLen())
	role := "a response, handled by the requester's completer"
	if op.IsRequest() {
		role = "a request, handled by the responder"
	}
	fmt.Fprintf(&w, "  role:     %s\n", role)
	rwr := "none"
	switch {
	case op.ConsumesRecvWQE() && op.CompletesRecvWQE():
		rwr = "takes a receive WQE and completes it"
	case op.ConsumesRecvWQE():
		rwr = "takes a receive WQE"
	case op.CompletesRecvWQE():
		rwr = "completes the receive WQE taken by the FIRST packet"
	}
	fmt.Fprintf(&w, "  recv WQE: %s\n", rwr)
	fmt.Fprintf(&w, "  meaning:  %s\n", opSentence(op))
	if op.Transport() == XRC {
		fmt.Fprintf(&w, "  carried:  by vsh's simulator when its XRC capability is on; kernel rxe does not implement XRC\n")
	}
	return w.String()
}
