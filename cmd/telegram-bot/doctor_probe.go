package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/volcanic/telegram-agent/internal/procgroup"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// probeTimeout bounds one of the doctor's live probes.
const probeTimeout = 10 * time.Second

// runPrepared runs shell -c pc.Command as pc prepared it (through the
// launcher, when the sandbox is on) and returns what it wrote to its
// standard output, and to its standard error too unless errw takes that;
// its process group is killed after probeTimeout. No context and a pipe
// for the output: what a launcher started ahead takes (a context's
// cancellation is a timer here). err is cmd.Wait's.
func runPrepared(ctx context.Context, pc spawnpolicy.Context, shell string, errw io.Writer) ([]byte, error) {
	cmd := exec.Command(shell, "-c", pc.Command)
	pc.ApplyTo(cmd)
	procgroup.Set(cmd)
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	cmd.Stdout, cmd.Stderr = pw, pw
	if errw != nil {
		cmd.Stderr = errw
	}
	err = pc.Start(cmd)
	pw.Close()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { procgroup.Kill(cmd) })
	defer stop()
	out, _ := io.ReadAll(pr)
	return out, cmd.Wait()
}
