"""Google Drive as a source: files under picked folders or in a shared drive, with Drive's permissions."""

from connectors.sources.google_drive.config import GoogleDriveConfig
from connectors.sources.google_drive.connector import GoogleDriveConnector

__all__ = ["GoogleDriveConfig", "GoogleDriveConnector"]
