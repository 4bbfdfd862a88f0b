"""Demo driver: a real Home Assistant with agentic_hems on sample prices and three stand-in appliances.

Run through ``scripts/demo`` (which builds the venv first). The driver

1. prepares a fresh config directory under ``.demo/`` (``configuration.yaml`` with the home in Europe/Brussels, the
   ``input_boolean`` stand-ins, a template garage door, ``input_number`` stand-ins for the grid, PV and battery meters
   read by template sensors, the battery's setpoint, a recorder committing every second; the HTTP settings (127.0.0.1
   and the port) in ``.storage/http``; the MATPOWER case ``case9.m`` in ``agentic_hems/networks/``, and
   ``custom_components/agentic_hems`` linked to this checkout, ``custom_components/home_connect`` to the stand-in);
2. starts the venv's ``hass -c .demo/config`` on 127.0.0.1:8123 and waits for it (180 s deadline);
3. completes onboarding over the REST API (an owner account whose credentials are printed);
4. sets agentic_hems up through HA's own config flow and appliance subentry flows over REST, then maps the home twin
   (PV, battery, meters, setpoint) in the options flow's grid step; adds the battery and the simulated house's heat
   pump (a generic thermostat on a simulated indoor temperature, a template weather with an hourly forecast) through
   their subentry forms;
5. calls ``agentic_hems.get_prices`` and ``agentic_hems.plan`` for each appliance and prints the results in local time;
6. previews the gates, asks the offline planner, and calls every grid toolkit service as the owner on the home twin
   and on case9, from a snapshot through an approved plan (one gated setpoint command) to the audit chain's check;
7. checks that every agentic_hems entity exists and is not unavailable, and that every appliance has all its entities;
8. checks that the frontend imports the cards' bundle as an extra module and creates the storage-mode dashboard "Energy plan"
   (``/energy-plan``) with the four cards, over the websocket API; then checks what the frontend needs besides (the
   websocket commands it sends on every page load, the dashboard's panel, no pending HTTP settings) and that HA
   serves the integration's brand icons from its ``brand/`` folder;
9. asks for an EV charge from the next slot boundary at least 90 s ahead and prints its plan (``ev``); with
   ``--check`` waits for that boundary (up to 16.5 min) and checks the charger's current, phases and start there;
10. then either leaves HA running for the browser until Ctrl-C, or (``--check``) stops HA and exits 0 only when every
   plan is feasible and every check passed.

Home Assistant always stops when the driver ends (normal exit, error, Ctrl-C, SIGTERM; PDEATHSIG covers SIGKILL).
Only the standard library and aiohttp (which Home Assistant ships) are used.

The package: ``process`` (the HA process and its config directory), ``client`` (REST, websocket, flow forms),
``constants``, ``devices`` and ``fixtures`` (the home's names, YAML and form answers), one scenario module per feature
(``plans``, ``gates``, ``grid``, ``frontend``, ``home``, ``heat``, ``appliances``, ``home_connect``, ``ev``: mixins
of ``demo.Demo``, which runs them in order), ``home_connect_stand_in/`` (the demo's stand-in for HA core's
home_connect integration, linked into the config's ``custom_components/home_connect``) and ``main`` (options, the
run, the JSON report). ``python -m hems_demo`` with ``scripts/`` on the path runs it; ``scripts/demo`` does that.
"""
