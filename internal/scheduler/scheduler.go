package scheduler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/storagefail"
)

// maxWait is the longest the firing loop sleeps before it looks at the
// clock again, so a jump of the wall clock (a suspended host) is noticed.
const maxWait = time.Minute

// lateAfter is how long after its time a one-shot job counts as late even
// when the bot was up.
const lateAfter = time.Minute

// Scheduler keeps the jobs of every chat, fires them on time and offers
// the model its tools. It is an [agent.Extension]. Build it with New,
// register it with the agent, then Start it with the chats once the agent
// has activated it; Stop it before the agent closes. Its methods are safe
// for concurrent use.
type Scheduler struct {
	path string
	cfg  config
	wake chan struct{}
	wg   sync.WaitGroup

	// saveMu serialises writes of the file, so the last write holds the
	// latest state.
	saveMu sync.Mutex

	mu    sync.Mutex
	jobs  map[string]*entry
	runs  map[string]context.CancelFunc
	fired map[string]firedShot
	// interrupted holds the one-shot jobs found firing at start-up, until
	// their chat was told; the file keeps them until then.
	interrupted map[string]Job
	procs       agent.ProcessPreparer
	red         *redactor.Redactor
	// chats is what the jobs fire through, given to Start; nil before.
	chats  Chats
	logger *slog.Logger
	// saves is the episode of the jobs file's failed saves, logged by
	// logger.
	saves     *storagefail.Episode
	activated bool
	started   bool
	stopped   bool
	startedAt time.Time
	cancel    context.CancelFunc
}

// entry is a job with its parsed schedule and the instant its next run is
// sought after.
type entry struct {
	job   Job
	sched schedule
	// anchor is when the job last fired, was created or the scheduler
	// started: its next run is the schedule's first after it. Zero means
	// after now.
	anchor time.Time
	// alerted reports that the chat was told this one-shot job could not
	// be marked as fired in the file, so it is told only once.
	alerted bool
}

// New loads the jobs kept at path (<AGENT_DIR>/jobs.json; a missing file
// holds none) and returns a scheduler that fires them through the chats
// Start is given. A file that does not parse is an error naming path and
// the reason, and the file is left as it is.
func New(path string, opts ...Option) (*Scheduler, error) {
	if path == "" {
		return nil, errors.New("scheduler: no jobs file path")
	}
	cfg := config{
		now:           time.Now,
		scriptTimeout: DefaultScriptTimeout,
		killGrace:     defaultKillGrace,
		outputLimit:   DefaultOutputLimit,
		maxJobs:       DefaultMaxJobs,
		minInterval:   DefaultMinInterval,
		saveFile:      saveJobs,
		reportPause:   defaultReportPause,
		maxReported:   defaultMaxReported,
	}
	for _, opt := range opts {
		opt(&cfg)
	}
	if cfg.workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("scheduler: finding a default workspace: %w", err)
		}
		cfg.workspace = wd
	}
	jobs, err := loadJobs(path)
	if err != nil {
		return nil, err
	}
	s := &Scheduler{
		path:        path,
		cfg:         cfg,
		wake:        make(chan struct{}, 1),
		jobs:        make(map[string]*entry, len(jobs)),
		runs:        make(map[string]context.CancelFunc),
		fired:       make(map[string]firedShot),
		logger:      cmp.Or(cfg.logger, slog.New(slog.DiscardHandler)),
		interrupted: make(map[string]Job),
	}
	s.saves = newSaveEpisode(s.logger)
	for _, j := range jobs {
		if !j.Fired.IsZero() {
			if j.OneShot() {
				// Cut short before its prompt reached the chat: Start
				// tells the chat; it never runs again.
				s.interrupted[j.ID] = j
				continue
			}
			// Only a one-shot job fires that way; on a recurring job
			// (a hand-edited or forged file) the mark means nothing.
			j.Fired = time.Time{}
		}
		sched, err := storedSchedule(j)
		if err != nil {
			return nil, fmt.Errorf("scheduler: %s: job %q: %w", path, j.ID, err)
		}
		s.jobs[j.ID] = &entry{job: j, sched: sched}
	}
	return s, nil
}

// storedSchedule returns the schedule of a job read from the file.
func storedSchedule(j Job) (schedule, error) {
	if j.OneShot() {
		return schedule{at: j.At}, nil
	}
	return parseSchedule(j.Schedule, time.UTC)
}

// Name returns "scheduler".
func (s *Scheduler) Name() string { return "scheduler" }

// Activate registers the tools schedule_job, list_jobs and cancel_job,
// and keeps the agent's process-wide spawn policy (for watcher scripts) and
// redactor (for their output).
func (s *Scheduler) Activate(_ context.Context, api *agent.API) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.activated {
		return errors.New("scheduler: already activated")
	}
	s.procs = api.Processes()
	s.red = api.Redactor()
	if s.cfg.logger == nil {
		s.logger = api.Logger()
		s.saves = newSaveEpisode(s.logger)
	}
	s.activated = true
	for _, t := range s.tools() {
		api.RegisterTool(t)
	}
	return nil
}

// processes returns the spawn policy given at activation, nil before.
func (s *Scheduler) processes() agent.ProcessPreparer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.procs
}

// redactor returns the agent's redactor (nil before activation, which
// redacts nothing).
func (s *Scheduler) redactor() *redactor.Redactor {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.red
}

// log returns the logger.
func (s *Scheduler) log() *slog.Logger {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logger
}

// Start begins firing jobs through chats, until Stop or until ctx is done.
// The chats (the chat host) come here rather than to New because they are
// built after the agent that activates the scheduler; before Start nothing
// fires, and a chat's zone is the host's own. A one-shot job whose time
// passed while the bot was down runs once, at once, marked late; recurring
// jobs do not back-fill. A one-shot job that a crash or a restart
// cut short after it fired, before the chat took its prompt, does not run
// again: its chat is told (see reportInterrupted). The agent must have
// activated the scheduler first, so that watcher scripts go through its
// spawn policy.
func (s *Scheduler) Start(ctx context.Context, chats Chats) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case chats == nil:
		return errors.New("scheduler: chats is nil")
	case !s.activated:
		return errors.New("scheduler: start before the agent activated it")
	case s.started:
		return errors.New("scheduler: already started")
	}
	s.started = true
	s.chats = chats
	now := s.cfg.now()
	s.startedAt = now
	for _, e := range s.jobs {
		if e.anchor.Before(now) {
			e.anchor = now
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	s.wg.Add(1)
	go s.loop(runCtx)
	if len(s.interrupted) > 0 {
		s.wg.Add(1)
		go s.reportInterrupted(runCtx)
	}
	return nil
}

// Stop stops firing, cancels the running jobs (a script's process group
// is killed) and waits for them to end, or for ctx. Stopping a scheduler
// that is not running does nothing.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.mu.Lock()
	if !s.started || s.stopped {
		s.mu.Unlock()
		return nil
	}
	s.stopped = true
	cancel := s.cancel
	s.mu.Unlock()
	cancel()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("scheduler: stopping: %w", ctx.Err())
	}
}

// poke makes the firing loop look at the jobs again.
func (s *Scheduler) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// List returns the target chat's jobs, sorted by next run, then the
// one-shot jobs a restart cut short whose chat is not told yet
// ([Job.CutShort], no next run).
func (s *Scheduler) List(target string) []Job {
	return s.sorted(func(j Job) bool { return j.Target == target })
}

// All returns every chat's jobs, sorted by target, then next run (for the
// doctor command), the ones a restart cut short included.
func (s *Scheduler) All() []Job {
	return s.sorted(func(Job) bool { return true })
}

// sorted returns the jobs keep accepts, by target, then next run (never
// last), then id.
func (s *Scheduler) sorted(keep func(Job) bool) []Job {
	type item struct {
		job  Job
		next time.Time
	}
	var items []item
	now := s.cfg.now()
	zones := make(map[string]*time.Location)
	for _, e := range s.snapshot() {
		if keep(e.job) {
			items = append(items, item{e.job, e.sched.next(cmpOrTime(e.anchor, now), s.location(e.job.Target, zones))})
		}
	}
	for _, j := range s.cutShort() {
		if keep(j) {
			items = append(items, item{job: j}) // no next run: it never runs
		}
	}
	sort.Slice(items, func(i, j int) bool {
		a, b := items[i], items[j]
		return cmp.Or(
			strings.Compare(a.job.Target, b.job.Target),
			compareNext(a.next, b.next),
			strings.Compare(a.job.ID, b.job.ID),
		) < 0
	})
	out := make([]Job, len(items))
	for i, it := range items {
		out[i] = it.job
	}
	return out
}

// compareNext orders run times, zero (never) last.
func compareNext(a, b time.Time) int {
	switch {
	case a.IsZero() && b.IsZero():
		return 0
	case a.IsZero():
		return 1
	case b.IsZero():
		return -1
	}
	return a.Compare(b)
}

// cmpOrTime returns t, or def when t is zero.
func cmpOrTime(t, def time.Time) time.Time {
	if t.IsZero() {
		return def
	}
	return t
}

// Next returns the job's next run, in its target chat's zone; zero when it
// will not run again (a job a restart cut short never does).
func (s *Scheduler) Next(job Job) time.Time {
	if job.CutShort() {
		return time.Time{}
	}
	s.mu.Lock()
	e, ok := s.jobs[job.ID]
	var cp entry
	if ok {
		cp = *e
	}
	s.mu.Unlock()
	if !ok {
		sched, err := storedSchedule(job)
		if err != nil {
			return time.Time{}
		}
		cp = entry{job: job, sched: sched}
	}
	loc := s.location(job.Target, nil)
	return cp.sched.next(cmpOrTime(cp.anchor, s.cfg.now()), loc).In(loc)
}

// add keeps a new job, within the target chat's limit, and saves the file;
// a failed save leaves the job out.
func (s *Scheduler) add(job Job, sched schedule) (Job, error) {
	s.mu.Lock()
	n := 0
	for _, e := range s.jobs {
		if e.job.Target == job.Target {
			n++
		}
	}
	if n >= s.cfg.maxJobs {
		s.mu.Unlock()
		return Job{}, fmt.Errorf("this chat already has %d jobs, the most it may have; cancel one first", n)
	}
	for job.ID == "" || s.jobs[job.ID] != nil || s.hasFired(job.ID) {
		job.ID = newID()
	}
	if job.Name == "" {
		job.Name = defaultName(job.Prompt, job.ID)
	}
	s.jobs[job.ID] = &entry{job: job, sched: sched, anchor: job.Created}
	s.mu.Unlock()
	if err := s.save(); err != nil {
		s.mu.Lock()
		delete(s.jobs, job.ID)
		s.mu.Unlock()
		return Job{}, err
	}
	s.poke()
	return job, nil
}

// snapshot returns copies of every entry.
func (s *Scheduler) snapshot() []entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]entry, 0, len(s.jobs))
	for _, e := range s.jobs {
		out = append(out, *e)
	}
	return out
}

// cutShort returns the one-shot jobs a restart cut short whose chat is
// not told yet.
func (s *Scheduler) cutShort() []Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Values(s.interrupted))
}

// save writes every job to the file.
func (s *Scheduler) save() error {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	jobs := make([]Job, 0, len(s.jobs))
	for id, e := range s.jobs {
		if _, fired := s.fired[id]; !fired { // a one-shot job being fired
			jobs = append(jobs, e.job)
		}
	}
	for _, f := range s.fired {
		if f.inFile {
			jobs = append(jobs, f.job)
		}
	}
	for _, j := range s.interrupted {
		jobs = append(jobs, j)
	}
	red := s.red
	s.mu.Unlock()
	for i, j := range jobs {
		jobs[i] = redactJob(red, j)
	}
	sort.Slice(jobs, func(i, j int) bool {
		return cmp.Or(jobs[i].Created.Compare(jobs[j].Created), strings.Compare(jobs[i].ID, jobs[j].ID)) < 0
	})
	if err := s.cfg.saveFile(s.path, jobs); err != nil {
		return err
	}
	s.saveEpisode().Succeeded()
	return nil
}

// location returns the target chat's zone, through cache when it is not
// nil. It never holds s.mu: the chat host may hold its own lock while it
// calls the scheduler.
func (s *Scheduler) location(target string, cache map[string]*time.Location) *time.Location {
	if loc, ok := cache[target]; ok {
		return loc
	}
	id := s.timeZone(target)
	loc, ok := loadZone(id)
	if !ok {
		s.log().Warn("scheduler: the chat's time zone does not resolve; using the host's", "target", target, "zone", id)
	}
	if cache != nil {
		cache[target] = loc
	}
	return loc
}

// timeZone returns the target chat's zone id from the chats, "" (the
// host's) before Start. It calls them without s.mu held.
func (s *Scheduler) timeZone(target string) string {
	s.mu.Lock()
	chats := s.chats
	s.mu.Unlock()
	if chats == nil {
		return ""
	}
	return chats.TimeZone(target)
}

// hasFired reports whether id is a one-shot job that fired, in this
// process or before a restart cut it short (s.mu held): a new job must not
// take its id.
func (s *Scheduler) hasFired(id string) bool {
	_, ok := s.fired[id]
	_, cut := s.interrupted[id]
	return ok || cut
}
