//go:build linux

package sandbox

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// The offsets of struct seccomp_data's fields, as a filter loads them. An
// argument is loaded by its low 32 bits (both amd64 and arm64 are little
// endian): every argument the filters look at is an int, of which the
// kernel reads only those bits, so the high ones a caller sets cannot
// make a refused value look like an allowed one.
const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

// argLow returns the offset of the low 32 bits of argument i.
func argLow(i int) uint32 { return uint32(offArgs + 8*i) }

// program is a classic BPF program being written: instructions whose
// jumps name labels, resolved by assemble. A label is placed before the
// instruction that follows it; the empty label is the next instruction.
type program struct {
	ins    []unix.SockFilter
	jumps  []jump
	labels map[string]int
}

// jump is a conditional jump's targets, to resolve.
type jump struct {
	at     int
	jt, jf string
}

// label places name before the next instruction.
func (p *program) label(name string) {
	if p.labels == nil {
		p.labels = map[string]int{}
	}
	p.labels[name] = len(p.ins)
}

// load loads the 32-bit word at off of the seccomp data.
func (p *program) load(off uint32) {
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off})
}

// and masks the loaded word with k.
func (p *program) and(k uint32) {
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_ALU | unix.BPF_AND | unix.BPF_K, K: k})
}

// jeq jumps to jt when the loaded word is k, to jf otherwise.
func (p *program) jeq(k uint32, jt, jf string) { p.cond(unix.BPF_JEQ, k, jt, jf) }

// jge jumps to jt when the loaded word is k or more, to jf otherwise.
func (p *program) jge(k uint32, jt, jf string) { p.cond(unix.BPF_JGE, k, jt, jf) }

func (p *program) cond(op uint16, k uint32, jt, jf string) {
	p.jumps = append(p.jumps, jump{at: len(p.ins), jt: jt, jf: jf})
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_JMP | op | unix.BPF_K, K: k})
}

// ret ends the program with the action k.
func (p *program) ret(k uint32) {
	p.ins = append(p.ins, unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: k})
}

// assemble resolves the jumps. A jump goes forward only, at most 255
// instructions: the filters here are a few dozen.
func (p *program) assemble() ([]unix.SockFilter, error) {
	out := append([]unix.SockFilter(nil), p.ins...)
	for _, j := range p.jumps {
		for _, t := range []struct {
			name string
			off  *uint8
		}{{j.jt, &out[j.at].Jt}, {j.jf, &out[j.at].Jf}} {
			if t.name == "" {
				continue
			}
			to, ok := p.labels[t.name]
			if !ok {
				return nil, fmt.Errorf("seccomp filter: no label %q", t.name)
			}
			skip := to - j.at - 1
			if skip < 0 || skip > 255 {
				return nil, fmt.Errorf("seccomp filter: jump to %q out of range (%d)", t.name, skip)
			}
			*t.off = uint8(skip)
		}
	}
	return out, nil
}
