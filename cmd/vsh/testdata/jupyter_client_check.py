"""The vsh kernel through jupyter_client, as Jupyter's front ends use it.

Run by cmd/vsh's TestJupyterClient with JUPYTER_PATH naming the kernel
specs it installed: "vsh" on the simulator, "vsh-udp" on the simulator's
UDP link, where a wait takes real time. Exits non-zero on a failure.
"""
import queue
import sys
import time

import jupyter_client

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def run(kc, code, timeout=20):
    """Executes code; returns the reply's content and the iopub messages."""
    msgs = []
    reply = kc.execute_interactive(code, timeout=timeout, output_hook=msgs.append)
    return reply["content"], msgs


def text(msgs):
    out = []
    for m in msgs:
        if m["msg_type"] == "display_data":
            out.append(m["content"]["data"].get("text/plain", ""))
        elif m["msg_type"] == "stream":
            out.append(m["content"]["text"])
    return "\n".join(out)


km, kc = jupyter_client.manager.start_new_kernel(kernel_name="vsh")
try:
    info = kc.kernel_info(reply=True, timeout=10)["content"]
    check(info["protocol_version"] == "5.3" and info["language_info"]["name"] == "vsh", "kernel_info: %r" % info)

    r, msgs = run(kc, "open_device A\nalloc_pd ctx0\ncreate_cq ctx0")
    check(r["status"] == "ok", "execute: %r" % r)
    check("[2] ibv_alloc_pd(ctx0) → pd0" in text(msgs), "execute's output: %r" % text(msgs))

    # A "! " line must fail, and does: the cell goes on.
    r, msgs = run(kc, "! open_device Z\nopen_device B")
    check(r["status"] == "ok", "a failing ! line: %r" % r)
    check('no device "Z"' in text(msgs), "the ! line's output: %r" % text(msgs))

    # A failure ends the cell with a Jupyter error.
    r, msgs = run(kc, "modify_qp qp9 state=init\nopen_device A")
    check(r["status"] == "error" and r["ename"] == "UsageError", "a failure: %r" % r)
    check(any(m["msg_type"] == "error" for m in msgs), "no error message on iopub")
    check("open_device(A" not in text(msgs), "the cell went on after its failure")

    c = kc.complete("modify_qp qp0 state=r", 21, reply=True, timeout=10)["content"]
    check({"rtr", "rts"} <= set(c["matches"]) and c["cursor_start"] == 20, "complete: %r" % c)

    i = kc.inspect("post_send qp0", 3, reply=True, timeout=10)["content"]
    check(i["found"] and "usage: post_send" in i["data"]["text/plain"], "inspect: %r" % i)

    for code, want in (("open_device A", "complete"), ('fill mr0 "abc', "invalid"), ("fill mr0 \"it's\" # don't", "complete")):
        msg_id = kc.is_complete(code)
        ic = kc.get_shell_msg(timeout=10)
        check(ic["parent_header"]["msg_id"] == msg_id and ic["content"]["status"] == want, "is_complete %r: %r" % (code, ic["content"]))

    h = kc.history(hist_access_type="tail", n=1, reply=True, timeout=10)["content"]
    check(h["history"] and "modify_qp qp9" in h["history"][-1][2], "history: %r" % h)

    # Restart: a fresh session, handles from 0 again.
    km.restart_kernel(now=False)
    kc.wait_for_ready(timeout=30)
    r, msgs = run(kc, "open_device A")
    check(r["status"] == "ok" and "[1] ibv_open_device(A = sim0) → ctx0" in text(msgs), "after restart: %r %r" % (r, text(msgs)))
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)

# Interrupt: a wait on the UDP link takes real time; interrupt_kernel
# (SIGINT, interrupt_mode "signal") stops it and the cell.
km, kc = jupyter_client.manager.start_new_kernel(kernel_name="vsh-udp")
try:
    r, _ = run(kc, "open_device sim0\nalloc_pd ctx0\ncreate_cq ctx0")
    check(r["status"] == "ok", "udp setup: %r" % r)
    msg_id = kc.execute("poll_cq cq0 wait=10s\nopen_device sim0")
    time.sleep(0.5)
    start = time.monotonic()
    km.interrupt_kernel()
    reply = None
    while reply is None:
        m = kc.get_shell_msg(timeout=8)
        if m["parent_header"].get("msg_id") == msg_id:
            reply = m["content"]
    took = time.monotonic() - start
    check(reply["status"] == "error" and reply["ename"] == "Interrupted" and took < 3,
          "interrupt: %r after %.2fs" % (reply, took))
    r, _ = run(kc, "open_device sim0")
    check(r["status"] == "ok", "after the interrupt: %r" % r)
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)

if failures:
    sys.exit("%d failure(s)" % len(failures))
print("jupyter_client: all checks passed")
