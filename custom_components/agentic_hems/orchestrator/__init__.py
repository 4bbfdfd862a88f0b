"""The ReAct orchestrator: actions, the reply parser, the loop and the offline planner.

Pure core: no ``homeassistant`` imports. The HA shell gives the loop a model (an OpenAI-compatible client or the
offline planner) and the tools that carry out actions.
"""
