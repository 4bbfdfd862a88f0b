// placeholder bundle until the build lands: agentic-hems-schedule-card agentic-hems-trace-card agentic-hems-ask-card agentic-hems-runs-card
