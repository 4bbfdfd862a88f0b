"""The config flow's helpers: its forms, its checks, the options flow and the appliance subentry flow."""
