"""The simulated Android phone: screens, widgets, renderer, uiautomator XML, mock apps, tasks, verifiers."""
