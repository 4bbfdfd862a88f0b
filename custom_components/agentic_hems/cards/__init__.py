"""The Lovelace cards' back end: serving their bundle and the websocket commands they read."""
