"""Turning phones into episodes: the Phone protocol, the adb phone, the episode loop, demo recording."""
