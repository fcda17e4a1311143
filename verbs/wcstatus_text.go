package verbs

// wcStatusText explains each completion status for a learner: what
// happened and what usually causes it.
var wcStatusText = map[WCStatus]string{
	WCSuccess: "The work request finished. For a send, the data reached the peer (on RC: the peer acknowledged it); " +
		"for a receive, a message landed in the buffer, and byte_len says how much.",
	WCLocLenErr: "Local length error: a message did not fit. On a receive, the incoming SEND was longer than the receive " +
		"buffer (on UD, remember the 40 GRH bytes in front); on a send, the message is longer than the port allows or the " +
		"inline data longer than max_inline_data. rxe does not report it: an RC requester sees IBV_WC_REM_INV_REQ_ERR instead " +
		"and a UD datagram is dropped. Post receive buffers as large as the largest message.",
	WCLocQPOpErr: "Local QP operation error: the QP could not carry out this work request as written, for example an opcode " +
		"its transport does not have (RDMA READ or atomics on UC or UD), too many SGEs, or a UD send without a usable address handle.",
	WCLocEECOpErr: "Local EE context operation error: a Reliable Datagram error, which RC, UC and UD never report.",
	WCLocProtErr: "Local protection error: an SGE does not lie inside a valid MR of the QP's PD: the lkey is wrong, belongs " +
		"to another PD, the address range runs past the MR, or the device must write a buffer whose MR lacks local_write " +
		"(receives, READ responses, atomic results).",
	WCWRFlushErr: "Work Request Flushed: the QP was (or went) in the error state while this WR was outstanding, so it was not " +
		"carried out. Flushes come in floods; only the first error completion before them says what went wrong. To reuse the QP, " +
		"modify it to RESET and connect it again.",
	WCMWBindErr: "Memory window bind error: a bind of a memory window failed (vsh does not bind memory windows).",
	WCBadRespErr: "Bad response error: the requester got a response it did not expect (a wrong opcode or length) from the " +
		"responder; the QP goes to ERR.",
	WCLocAccessErr: "Local access error: writing the data of a READ response or an atomic result into local memory was refused, " +
		"usually because that MR lacks local_write.",
	WCRemInvReqErr: "Remote invalid request: the responder refused the request itself: an operation its QP does not allow, " +
		"more READs or atomics in flight than its max_dest_rd_atomic, or a SEND longer than its receive buffer. On rxe, a " +
		"responder QP whose qp_access_flags lack remote_write, remote_read or remote_atomic also answers so (hardware may give " +
		"IBV_WC_REM_ACCESS_ERR).",
	WCRemAccessErr: "Remote access error: the responder refused the memory access: the rkey is wrong or of another PD, the " +
		"address range runs past its MR, or the MR lacks remote_write, remote_read or remote_atomic (remote write and atomics " +
		"also need local_write on that MR). Check remote=, rkey= and the remote MR's access.",
	WCRemOpErr: "Remote operation error: the responder could not complete the operation, for example because its receive " +
		"WQE pointed at a bad buffer.",
	WCRetryExcErr: "Transport retry counter exceeded: no ACK came back after retry_cnt retransmissions, each after the ACK " +
		"timeout. The peer is not there: it is not connected back to this QP (its dest_qpn or dgid is wrong), it is not in RTR or " +
		"RTS, or the path drops the packets (a wrong GID or GID index, a path MTU larger than the link carries).",
	WCRNRRetryExcErr: "RNR retry counter exceeded: the receiver had no receive WQE posted when the SEND arrived (it answered " +
		"Receiver Not Ready), and the retries allowed by rnr_retry ran out. Post receives before the peer sends (rc_pingpong posts " +
		"them before RTR) and use rnr_retry=7, which retries forever.",
	WCLocRDDViolErr:    "Local RDD violation: a Reliable Datagram error, never seen on RC, UC or UD.",
	WCRemInvRDReqErr:   "Remote invalid RD request: a Reliable Datagram error, never seen on RC, UC or UD.",
	WCRemAbortErr:      "Remote aborted error: the responder aborted the operation.",
	WCInvEECNErr:       "Invalid EE context number: a Reliable Datagram error.",
	WCInvEECStateErr:   "Invalid EE context state: a Reliable Datagram error.",
	WCFatalErr:         "Fatal error: the device hit an error it cannot recover from; close and reopen it.",
	WCRespTimeoutErr:   "Response timeout error: a response did not come in time.",
	WCGeneralErr:       "General error: an error the other statuses do not describe.",
	WCTMErr:            "Tag matching error (tag-matching SRQs only).",
	WCTMRndvIncomplete: "Tag matching rendezvous incomplete (tag-matching SRQs only).",
}

// Explain says what completion status s means for a learner: what
// happened and what usually causes it ("" for an unknown status).
func (s WCStatus) Explain() string { return wcStatusText[s] }
