"""spine"""
