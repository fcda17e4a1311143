package shell

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/verbs"
)

// TestPacketLogAcrossCells: a packet sent in one cell and delivered (or
// dropped) in a later one, as in step mode, is listed once, in the cell
// that sent it, with its last verdict; a copy of a packet settled in an
// earlier cell (a duplicate) is no new packet; a resend is a
// retransmission.
func TestPacketLogAcrossCells(t *testing.T) {
	ev := func(seq uint64, from, summary, verdict string) verbs.PacketEvent {
		return verbs.PacketEvent{Seq: seq, From: from, Summary: summary, Verdict: verdict}
	}
	first := "RC SEND_FIRST dqpn=0x000011 psn=0x000008 len=1024"
	middle := "RC SEND_MIDDLE dqpn=0x000011 psn=0x000009 len=1024"
	ack := "RC ACKNOWLEDGE dqpn=0x000011 psn=0x000009 aeth=ACK"
	tests := []struct {
		name  string
		cells [][]verbs.PacketEvent
		want  [][]lessons.Packet // each cell's packets after the last drain
	}{
		{"delivered in the same cell", [][]verbs.PacketEvent{
			{ev(1, "sim0", first, "sent"), ev(1, "sim0", first, "delivered")},
		}, [][]lessons.Packet{{{Opcode: "RC SEND_FIRST"}}}},
		{"sent, then delivered by a later cell", [][]verbs.PacketEvent{
			{ev(1, "sim0", first, "sent"), ev(2, "sim0", middle, "sent")},
			{ev(1, "sim0", first, "delivered"), ev(2, "sim0", middle, "delivered"), ev(3, "sim1", ack, "sent"), ev(3, "sim1", ack, "delivered")},
		}, [][]lessons.Packet{
			{{Opcode: "RC SEND_FIRST"}, {Opcode: "RC SEND_MIDDLE"}},
			{{Opcode: "RC ACKNOWLEDGE"}},
		}},
		{"delivered twice, the copy in a later cell", [][]verbs.PacketEvent{
			{ev(1, "sim0", first, "sent"), ev(1, "sim0", first, "delivered")},
			{ev(1, "sim0", first, "delivered"), ev(2, "sim0", middle, "sent"), ev(2, "sim0", middle, "delivered")},
		}, [][]lessons.Packet{
			{{Opcode: "RC SEND_FIRST"}},
			{{Opcode: "RC SEND_MIDDLE"}},
		}},
		{"sent, then dropped by a later cell, then resent", [][]verbs.PacketEvent{
			{ev(1, "sim0", middle, "sent")},
			{ev(1, "sim0", middle, "dropped: sim1's QP is not ready")},
			{ev(2, "sim0", middle, "sent"), ev(2, "sim0", middle, "delivered")},
		}, [][]lessons.Packet{
			{{Opcode: "RC SEND_MIDDLE", Dropped: true}},
			{},
			{{Opcode: "RC SEND_MIDDLE", Retransmitted: true}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := newPacketLog()
			var got [][]lessons.Packet
			for _, cell := range tt.cells {
				for _, e := range cell {
					pl.observe(e)
				}
				got = append(got, pl.drain())
			}
			require.Equal(t, tt.want, got)
			require.Empty(t, pl.inFlight, "packets settled are not kept")
		})
	}
}
