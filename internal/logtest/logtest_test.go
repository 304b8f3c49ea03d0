package logtest

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRecorder(t *testing.T) {
	r := New()
	logger := r.Logger().With("component", "test")
	logger.Info("started", "n", 3, "took", time.Second)
	logger.WithGroup("req").Warn("failed", "err", errors.New("boom"), slog.Group("env", "removed", []string{"A", "B"}))
	logger.Debug("quiet", slog.Attr{})

	want := []Record{
		{Level: slog.LevelInfo, Message: "started", Attrs: map[string]string{"component": "test", "n": "3", "took": "1s"},
			text: "INFO started component=test n=3 took=1s"},
		{Level: slog.LevelWarn, Message: "failed", Attrs: map[string]string{"component": "test", "req.err": "boom", "req.env.removed": "[A B]"},
			text: "WARN failed component=test req.err=boom req.env.removed=[A B]"},
		{Level: slog.LevelDebug, Message: "quiet", Attrs: map[string]string{"component": "test"},
			text: "DEBUG quiet component=test"},
	}
	if diff := cmp.Diff(want, r.Records(), cmp.AllowUnexported(Record{})); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if got := r.Find(Is(slog.LevelWarn, "fail")); len(got) != 1 || got[0].Attrs["req.err"] != "boom" {
		t.Errorf("Find(Is(Warn, fail)) = %v", got)
	}
	if diff := cmp.Diff(want[0].text+"\n"+want[1].text+"\n"+want[2].text, r.Text()); diff != "" {
		t.Errorf("Text() (-want +got):\n%s", diff)
	}
}

func TestRecorderWait(t *testing.T) {
	r := New()
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Logger().Info("first")
		r.Logger().Error("the one", "k", "v")
	}()
	got := r.Wait(t, "the error", Is(slog.LevelError, "the one"))
	<-done
	if got.Attrs["k"] != "v" {
		t.Errorf("Wait returned %v", got)
	}
}
