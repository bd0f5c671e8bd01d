"""Running a graph's nodes: node logic sync and async, the drivers, deadlines, recorded steps,
progress events, paused-call claims, the user's input, a run's budget and its ledger."""
