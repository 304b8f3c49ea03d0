package chat

import "time"

// wireFrontEnd hands each of the front end's concerns what it needs, once
// New has the settings, the clients and the options: the sessions, the
// usage meter, /jobs, /model, the attachments, the strangers and the
// commander over them. Each gets the host only as an outlet (or its
// queues), so that none reaches into the rest of it.
func wireFrontEnd(h *Host) {
	cfg := h.cfg
	h.sessions = sessions{agent: cfg.Agent, settings: h.settings, model: cfg.Model, models: cfg.Models, zone: cfg.DefaultTimeZone}
	m := menu{out: h}
	h.meter.sessions = &h.sessions
	h.jobs.sessions, h.jobs.logger, h.jobs.out, h.jobs.menu = &h.sessions, h.logger, h, m
	h.models = modelSwitch{sessions: &h.sessions, logger: h.logger, out: h, menu: m}
	h.inbox.api, h.inbox.redactor, h.inbox.logger, h.inbox.out = h.api, cfg.Redactor, h.logger, h
	h.inbox.workspace, h.inbox.view = cfg.WorkspaceDir, cfg.View
	h.strangers = strangers{logger: h.logger, silent: cfg.SilentToStrangers, out: h,
		logged: make(map[int64]time.Time), told: make(map[int64]time.Time)}
	c := &h.commander
	c.sessions, c.models, c.meter, c.jobs = &h.sessions, &h.models, &h.meter, &h.jobs
	c.queues, c.out, c.host, c.logger = h, h, h, h.logger
}
