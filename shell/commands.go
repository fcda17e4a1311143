package shell

import (
	"fmt"
	"github.com/vsh-rdma/vsh/lessons"
	"github.com/vsh-rdma/vsh/shell/render"
	"io"
	"sort"
	"strings"
)

// group is a section of help and of docs/commands.md.
type group int

const (
	gDevice group = iota
	gMemory
	gCQ
	gQP
	gData
	gView
	gFabric
	gSession
	numGroups
)

var groupTitles = [numGroups]string{
	gDevice:  "Devices and contexts",
	gMemory:  "Protection domains and memory",
	gCQ:      "Completion queues and channels",
	gQP:      "Queue pairs, SRQs and address handles",
	gData:    "Data path: posting and polling",
	gView:    "Views",
	gFabric:  "The fabric (simulator)",
	gSession: "Session",
}

// command is one entry of the command table, the single source of help,
// completion and docs/commands.md.
type command struct {
	Name    string
	Aliases []string
	Group   group
	// Usage is the grammar line: "reg_mr PD length=N [access=FLAGS]".
	Usage string
	// Summary is one line, as help lists it.
	Summary string
	// Help is the long text of help CMD.
	Help string
	Args []argSpec
	// rawArgs: the handler reads its words itself (repeat, explain, fill).
	rawArgs bool
	// meta: a session command; no live view after it.
	meta bool
	// notebook: false for commands a saved notebook leaves out (save,
	// source — whose commands are saved instead — and quit).
	skipNotebook bool
	// network: it reaches other hosts, which a confined session does not
	// (Options.Confined).
	network bool
	run     func(*call) error
	// settings are an experiment's effective settings, defaults filled
	// in, recorded in place of the numbers typed, as a lesson's judge
	// compares them: bench max=4k is another sweep than the default's 1M.
	// Nil where the numbers typed say it all.
	settings func(*call) []lessons.Arg
	// complete completes the arguments of a rawArgs command: words are the
	// complete words after the command name, word the one being typed.
	complete func(s *Shell, words []token, word string) []Suggestion
}

func (c *command) findSpec(name string, k argKind) *argSpec {
	for i := range c.Args {
		sp := &c.Args[i]
		if sp.kind != k {
			continue
		}
		if sp.name == name {
			return sp
		}
		for _, a := range sp.aliases {
			if a == name {
				return sp
			}
		}
	}
	return nil
}

func (c *command) positionals() []argSpec {
	var out []argSpec
	for _, sp := range c.Args {
		if sp.kind == posArg {
			out = append(out, sp)
		}
	}
	return out
}

func (c *command) usageHint() string { return "usage: " + c.Usage }

// Handle-valued arguments shared by several commands.
var (
	argCtx = pos("CTX", vCtx, true, "a device context: ctx0")
	argPD  = pos("PD", vPD, true, "a protection domain: pd0")
	argMR  = pos("MR", vMR, true, "a memory region: mr0")
	argCQ  = pos("CQ", vCQ, true, "a completion queue: cq0")
	argQP  = pos("QP", vQP, true, "a queue pair: qp0")
	argSRQ = pos("SRQ", vSRQ, true, "a shared receive queue: srq0")
)

// recvArgs are the arguments of post_recv and post_srq_recv.
func recvArgs(first argSpec) []argSpec {
	return []argSpec{
		first,
		key("mr", vMR, "", "the MR the buffer is in (one SGE)"),
		key("offset", vSize, "0", "where the buffer starts in the MR"),
		key("length", vSize, "rest of the MR", "the buffer's length", "len"),
		key("sge", vSGE, "", "a list of SGEs instead of mr=: mr0:0:64,mr1:0:32 (MR:OFFSET:LENGTH)"),
		key("wr_id", vNum, "next number", "the work request's id, echoed in its completion"),
		key("count", vNum, "1", "post this many WRs in one call, wr_id counting up"),
	}
}

// commandTable builds the table, sorted by group then name.
func commandTable() []*command {
	cmds := []*command{
		// Devices and contexts.
		devicesCmd(),
		devinfoCmd(),
		openDeviceCmd(),
		closeDeviceCmd(),
		queryDeviceCmd(),
		queryPortCmd(),
		queryGIDCmd(),
		asyncEventsCmd(),

		// Protection domains and memory.
		allocPDCmd(),
		deallocPDCmd(),
		regMRCmd(),
		deregMRCmd(),
		memCmd(),
		fillCmd(),

		// Completion queues and channels.
		createCompChannelCmd(),
		destroyCompChannelCmd(),
		createCQCmd(),
		resizeCQCmd(),
		destroyCQCmd(),
		reqNotifyCQCmd(),
		getCQEventCmd(),
		ackCQEventsCmd(),

		// Queue pairs, SRQs and address handles.
		createQPCmd(),
		modifyQPCmd(),
		queryQPCmd(),
		destroyQPCmd(),
		connectCmd(),
		createSRQCmd(),
		modifySRQCmd(),
		querySRQCmd(),
		destroySRQCmd(),
		createAHCmd(),
		destroyAHCmd(),
		attachMcastCmd(),
		detachMcastCmd(),
		joinGroupCmd(), leaveGroupCmd(), // cmd_hostgroup.go: the host's IP group, which attach_mcast does not join
		openXRCDCmd(), closeXRCDCmd(), createSRQExCmd(), getSRQNumCmd(), createQPExCmd(), openQPCmd(), // cmd_xrc.go

		// Data path.
		postRecvCmd(),
		postSRQRecvCmd(),
		postSendCmd(),
		pollCQCmd(),

		// Views.
		showCmd(),
		watchCmd(),
		unwatchCmd(),

		// Fabric.
		backendCmd(),
		fabricCmd(),
		stepCmd(),
		runCmd(),
		advanceCmd(),
		faultCmd(),
		traceCmd(),

		// Session.
		helpCmd(),
		explainCmd(),
		historyCmd(),
		saveCmd(),
		sourceCmd(),
		repeatCmd(),
		resetCmd(),
		quitCmd(),
		lessonCmd(), predictCmd(), doCmd(), ppDestCmd(), ppStatsCmd(), // cmd_lesson.go, cmd_do.go, cmd_pp.go
		exchangeCmd(), pingpongCmd(), // cmd_exchange.go, cmd_pingpong.go
		storeCmd(), // cmd_store.go
		pathsCmd(), // cmd_paths.go
		benchCmd(), // cmd_bench.go
	}
	sort.SliceStable(cmds, func(i, j int) bool { return cmds[i].Group < cmds[j].Group })
	return cmds
}

// writeHelp lists the commands by group, Delve-style.
func (s *Shell) writeHelp(o *output) {
	for g := group(0); g < numGroups; g++ {
		o.add(groupTitles[g] + ":")
		w := 0
		for _, c := range s.cmds {
			if c.Group == g {
				w = max(w, len(c.Name))
			}
		}
		for _, c := range s.cmds {
			if c.Group != g {
				continue
			}
			o.addHanging(2+w+2, fmt.Sprintf("  %-*s  %s", w, c.Name, c.Summary))
		}
		o.add("")
	}
	o.addKind(render.Para, "help CMD explains one command; explain X explains an error, state or opcode.")
	o.addKind(render.Para, "In arguments, "+strings.ReplaceAll(numberSyntax, "`", "")+".")
	o.addParagraph("Verbs marked [control path] set up and tear down, each a command into the kernel; [data path] verbs move data and",
		"completions from user space where the device allows (on soft-RoCE post_send's doorbell is a system call): paths shows each one's way.")
}

// writeCommandHelp prints help CMD.
func writeCommandHelp(o *output, c *command) {
	o.addKind(render.Call, "usage: "+c.Usage)
	if len(c.Aliases) > 0 {
		o.add("aliases: " + strings.Join(c.Aliases, ", "))
	}
	o.add("")
	o.addKind(render.Para, c.Summary+".")
	if c.Help != "" {
		o.add("")
		for _, l := range strings.Split(c.Help, "\n") {
			if strings.HasPrefix(l, "\t") { // an example: a command to type
				o.addKind(render.Verbatim, strings.ReplaceAll(l, "\t", "  "))
				continue
			}
			o.addKind(render.Para, strings.ReplaceAll(l, "\t", "  "))
		}
	}
	if rows := argRows(c); len(rows) > 0 {
		o.add("")
		o.addTable(render.TableView{Columns: []render.Column{{Header: "argument"}, {Header: "default", Wrap: true}, {Header: "meaning", Wrap: true}}, Rows: rows})
	}
}

func argRows(c *command) [][]string {
	var rows [][]string
	for _, sp := range c.Args {
		if sp.help == "" {
			continue
		}
		name := sp.name
		switch sp.kind {
		case keyArg:
			name += "="
		}
		if len(sp.aliases) > 0 && sp.kind != posArg {
			name += " (" + strings.Join(sp.aliases, ", ") + ")"
		}
		def := sp.def
		if sp.req {
			def = "required"
		}
		if def == "" {
			def = "-"
		}
		rows = append(rows, []string{name, def, sp.help})
	}
	return rows
}

// WriteMarkdown writes the command reference, docs/commands.md, from the
// command table. go generate ./shell runs it.
func WriteMarkdown(w io.Writer) error {
	cmds := commandTable()
	var b strings.Builder
	b.WriteString("<!-- Code generated by go generate ./shell from shell/commands.go. DO NOT EDIT. -->\n\n")
	b.WriteString("# vsh commands\n\n")
	b.WriteString("Every command of the verbs shell, generated from the same table that feeds `help` and completion.\n")
	b.WriteString("Arguments are `key=value`; " + numberSyntax + "; flags and enums take short forms " +
		"(`remote_write`), libibverbs names (`IBV_ACCESS_REMOTE_WRITE`) or numbers; a handle (`qp1`, `mr1+100`) " +
		"stands wherever its number would. A line starting with `! ` must fail; `#` starts a comment.\n\n")
	b.WriteString("Verbs tagged `[control path]` set up and tear down objects, each a command into the kernel; `[data path]` verbs move " +
		"data and completions from user space where the device allows — on hardware `ibv_post_send`, `ibv_post_recv` and `ibv_poll_cq` " +
		"never enter the kernel, while soft-RoCE rings its doorbell with a `write()` system call. `paths` shows how rdma-core carries out each verb.\n\n")
	for g := group(0); g < numGroups; g++ {
		fmt.Fprintf(&b, "- [%s](#%s)\n", groupTitles[g], anchor(groupTitles[g]))
	}
	b.WriteString("- [Stopping a command, and limits](#stopping-a-command-and-limits)\n")
	b.WriteString("\n")
	for g := group(0); g < numGroups; g++ {
		fmt.Fprintf(&b, "## %s\n\n", groupTitles[g])
		for _, c := range cmds {
			if c.Group != g {
				continue
			}
			fmt.Fprintf(&b, "### %s\n\n", c.Name)
			fmt.Fprintf(&b, "    %s\n\n", c.Usage)
			b.WriteString(c.Summary + ".\n")
			if len(c.Aliases) > 0 {
				fmt.Fprintf(&b, "Aliases: %s.\n", "`"+strings.Join(c.Aliases, "`, `")+"`")
			}
			b.WriteString("\n")
			if c.Help != "" {
				for _, para := range strings.Split(c.Help, "\n\n") {
					if strings.HasPrefix(para, "\t") {
						for _, l := range strings.Split(para, "\n") {
							b.WriteString("    " + strings.TrimPrefix(l, "\t") + "\n")
						}
					} else {
						b.WriteString(para + "\n")
					}
					b.WriteString("\n")
				}
			}
			if rows := argRows(c); len(rows) > 0 {
				b.WriteString("| argument | default | meaning |\n|---|---|---|\n")
				for _, r := range rows {
					fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r[0], mdEscape(r[1]), mdEscape(r[2]))
				}
				b.WriteString("\n")
			}
		}
	}
	writeLimits(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func anchor(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
