package chat

import "time"

// wireFrontEnd hands each of the front end's concerns what it needs, once
// New has the settings, the clients and the options: the sessions, the
// usage meter, /jobs, /model, the attachments, the strangers and the
// commander over them. Each gets the host's outlet (and the commander its
// queues), so that none reaches into the rest of it.
func wireFrontEnd(h *Host) {
	cfg := h.cfg
	h.sessions = sessions{agent: cfg.Agent, settings: h.settings, model: cfg.Model, models: cfg.Models, zone: cfg.DefaultTimeZone,
		toolStatus: cfg.ToolStatus}
	m := menu{out: h.out}
	h.meter.sessions = &h.sessions
	h.jobs.sessions, h.jobs.logger, h.jobs.out, h.jobs.menu = &h.sessions, h.logger, h.out, m
	h.models = modelSwitch{sessions: &h.sessions, logger: h.logger, out: h.out, menu: m}
	h.inbox.api, h.inbox.redactor, h.inbox.logger, h.inbox.out = h.api, cfg.Redactor, h.logger, h.out
	h.inbox.workspace, h.inbox.view = cfg.WorkspaceDir, cfg.View
	h.strangers = strangers{logger: h.logger, silent: cfg.SilentToStrangers, out: h.out,
		logged: make(map[int64]time.Time), told: make(map[int64]time.Time)}
	c := &h.commander
	c.sessions, c.models, c.meter, c.jobs = &h.sessions, &h.models, &h.meter, &h.jobs
	c.approvals = h.front.chatApprovals
	c.queues, c.out, c.host, c.logger = h, h.out, h, h.logger
}
