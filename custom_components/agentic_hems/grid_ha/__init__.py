"""The grid toolkit in Home Assistant: the site's tenant for the pure tools, its audit log and its service actions."""
