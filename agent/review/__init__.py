"""Review of proposed findings: views for the command line and the web, and stored decisions."""
