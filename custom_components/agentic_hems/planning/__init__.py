"""Planning in Home Assistant: each appliance's plan, its entity views and the plan service actions."""
